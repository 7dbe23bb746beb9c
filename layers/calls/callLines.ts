import { Clock, Effect } from "effect"
import type { CallRequest } from "../../services/Calls.ts"
import type { CarrierAccount } from "../../services/Telephony.ts"
import type { TelephonyConfigsShape } from "../../services/TelephonyConfigs.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId, TelephonyConfigId, WorkflowId } from "../../src/domain/ids.ts"
import { asRegion, toE164 } from "../../src/phone/mod.ts"
import { carrierAccount } from "../telephony/carrierAccounts.ts"
import type { CallLine, CallRows } from "./callRows.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Everything a call is dialled with, decided from its request and the organization's settings. */
export interface ResolvedCall {
  readonly workflowId: WorkflowId
  readonly phoneNumber: string
  readonly line: CallLine
  readonly account: CarrierAccount
}

/** The voice check campaigns pass before dialling (LLM, STT, TTS, a reachable public URL, shared storage). */
export type VoicePreflight = (
  organizationId: number,
  carrier: { readonly provider: string; readonly apiBaseUrl: string }
) => Effect.Effect<void, Conflict>

/**
 * Decides a call's agent version, line and number, refusing what cannot be dialled: an agent of
 * another organization (not found, as if it did not exist), an archived one, one with no version
 * to run, no usable telephony, a caller number not of the configuration, a number that is not
 * dialable. The number rules are the seam where the calling rules campaigns follow (the
 * do-not-call list) refuse a single call too.
 */
export const resolveCall = (
  rows: CallRows,
  configs: TelephonyConfigsShape,
  preflight: VoicePreflight,
  organizationId: OrganizationId,
  request: Pick<CallRequest, "agent" | "useDraft" | "phoneNumber" | "telephonyConfigurationId" | "fromPhoneNumberId">
) =>
  Effect.gen(function*() {
    const agent = request.agent
    const agentId = agent._tag === "ById" ? agent.id : agent._tag === "ByUuid" ? agent.uuid : agent.path
    // A trigger node's path first; a path that is no trigger's may still be the agent's own UUID.
    const byTrigger = agent._tag === "ByTrigger"
      ? yield* rows.workflowByTrigger(organizationId, agent.path, request.useDraft)
      : undefined
    const uuid = agent._tag === "ByUuid" ? agent.uuid : agent._tag === "ByTrigger" ? agent.path : null
    if (byTrigger === undefined && uuid !== null && !UUID.test(uuid)) {
      return yield* new NotFound({ resource: "Workflow", id: agentId })
    }
    const workflow = byTrigger ?? (yield* rows.workflow(
      organizationId,
      agent._tag === "ById" ? { id: agent.id } : { uuid: uuid! }
    ))
    if (!workflow || workflow.status !== "active") return yield* new NotFound({ resource: "Workflow", id: agentId })
    const definition = yield* rows.definition(workflow.id, request.useDraft)
    if (!definition) {
      return yield* new Conflict({
        message: request.useDraft
          ? "The agent has no version to run"
          : "The agent has no published version: publish it, or call its latest draft with the test route"
      })
    }
    const outbound = yield* configs.outbound(organizationId, request.telephonyConfigurationId)
    const callerNumber = request.fromPhoneNumberId === null
      ? outbound.caller_ids[0]
      : yield* rows.callerNumber(outbound.id, request.fromPhoneNumberId)
    if (callerNumber === undefined) {
      return yield* ValidationFailed.single(
        ["body", "from_phone_number_id"],
        `Phone number ${request.fromPhoneNumberId} is not an active number of telephony configuration ${outbound.id}`
      )
    }
    const phoneNumber = toE164(request.phoneNumber, asRegion(outbound.default_region ?? ""))
    if (phoneNumber === undefined) {
      return yield* ValidationFailed.single(
        ["body", "phone_number"],
        "Not a dialable phone number: write it in E.164 form (+14155550123)"
      )
    }
    if (yield* rows.onDoNotCall(organizationId, phoneNumber)) {
      return yield* new Conflict({
        message: `${phoneNumber} is on the organization's do-not-call list; remove it there to call it`
      })
    }
    const cap = yield* rows.frequencyCapReached(organizationId, phoneNumber, yield* Clock.currentTimeMillis)
    if (cap !== undefined) {
      return yield* new Conflict({
        message: `${phoneNumber} has been called as often as the organization's frequency cap allows (${cap})`
      })
    }
    const account = carrierAccount(outbound)
    yield* preflight(organizationId, { provider: account.provider, apiBaseUrl: outbound.api_base_url })
    return {
      workflowId: workflow.id,
      phoneNumber,
      account,
      line: {
        provider: account.provider,
        telephonyConfigurationId: outbound.id as TelephonyConfigId,
        callerNumber,
        definitionId: definition.id,
        versionNumber: definition.version_number
      }
    } satisfies ResolvedCall
  })
