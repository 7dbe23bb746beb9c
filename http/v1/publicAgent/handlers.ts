import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type CallRequest, Calls } from "../../../services/Calls.ts"
import { UpstreamFailed } from "../../../src/domain/errors.ts"
import type { TelephonyConfigId } from "../../../src/domain/ids.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

interface TriggerInput {
  readonly payload: {
    readonly phone_number: string
    readonly initial_context?: Readonly<Record<string, unknown>> | null | undefined
    readonly telephony_configuration_id?: TelephonyConfigId | null | undefined
    readonly from_phone_number_id?: number | null | undefined
  }
  readonly headers: { readonly "idempotency-key"?: string | undefined }
}

export const PublicAgentHandlers = HttpApiBuilder.group(Api, "publicAgent", (handlers) =>
  Effect.gen(function*() {
    const calls = yield* Calls

    /** Dograh answers `initiated` once the carrier took the call, and an error when it did not. */
    const trigger = (agent: CallRequest["agent"], useDraft: boolean, { headers, payload }: TriggerInput) =>
      Effect.gen(function*() {
        const principal = yield* requireScope("calls:write")
        const request: CallRequest = {
          agent,
          useDraft,
          phoneNumber: payload.phone_number,
          variables: payload.initial_context ?? {},
          telephonyConfigurationId: payload.telephony_configuration_id ?? null,
          fromPhoneNumberId: payload.from_phone_number_id ?? null,
          scheduledAt: null,
          idempotencyKey: headers["idempotency-key"] ?? null,
          source: "public_agent"
        }
        const { call } = yield* calls.place(principal, request)
        if (call.run_id === null || call.end_reason === "not_placed") {
          return yield* new UpstreamFailed({ message: `Failed to initiate call: ${call.error ?? "not placed"}` })
        }
        return { status: "initiated", workflow_run_id: call.run_id, workflow_run_name: call.run_name ?? "" }
      })

    return handlers
      .handle("trigger", (input) => trigger({ _tag: "ByTrigger", path: input.path.uuid }, false, input))
      .handle("triggerTest", (input) => trigger({ _tag: "ByTrigger", path: input.path.uuid }, true, input))
      .handle("triggerWorkflow", (input) => trigger({ _tag: "ByUuid", uuid: input.path.workflow_uuid }, false, input))
      .handle(
        "triggerTestWorkflow",
        (input) => trigger({ _tag: "ByUuid", uuid: input.path.workflow_uuid }, true, input)
      )
  }))
