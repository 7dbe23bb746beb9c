import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Calls } from "../../../services/Calls.ts"
import { ValidationFailed } from "../../../src/domain/errors.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

export const CallsHandlers = HttpApiBuilder.group(Api, "calls", (handlers) =>
  Effect.gen(function*() {
    const calls = yield* Calls
    return handlers
      .handle("create", ({ headers, payload }) =>
        Effect.gen(function*() {
          const principal = yield* requireScope("calls:write")
          const header = headers["idempotency-key"] ?? null
          const body = payload.idempotency_key ?? null
          if (header !== null && body !== null && header !== body) {
            return yield* ValidationFailed.single(
              ["body", "idempotency_key"],
              "The Idempotency-Key header and the idempotency_key field differ"
            )
          }
          const placed = yield* calls.place(principal, {
            agent: { _tag: "ById", id: payload.agent_id },
            useDraft: payload.use_draft,
            phoneNumber: payload.phone_number,
            variables: payload.variables,
            telephonyConfigurationId: payload.telephony_configuration_id ?? null,
            fromPhoneNumberId: payload.from_phone_number_id ?? null,
            scheduledAt: payload.scheduled_at ? payload.scheduled_at.getTime() : null,
            idempotencyKey: header ?? body,
            source: "api"
          })
          // A replay answers as the first request was answered (201, the same call), as Stripe's keys do.
          return { data: placed.call }
        }))
      .handle("get", ({ path }) =>
        Effect.flatMap(requireScope("calls:read"), (principal) =>
          calls.get(principal, path.call_id)).pipe(
            Effect.map((data) => ({ data }))
          ))
  }))
