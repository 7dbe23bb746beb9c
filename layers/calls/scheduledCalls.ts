import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import { TelephonyConfigs } from "../../services/TelephonyConfigs.ts"
import type { OrganizationId, TelephonyConfigId, WorkflowId } from "../../src/domain/ids.ts"
import { callDeadline, dialOpenedCall } from "./callDialing.ts"
import { resolveCall } from "./callLines.ts"
import { makeCallPreflight, makeDialingDeps } from "./calls.ts"

/** Due calls taken per look; the rest wait for the next one. */
const BATCH = 20

/**
 * Places scheduled calls once they are due, from any process: each is taken under its
 * organization's claim lock with `SKIP LOCKED`, and only while the organization has a free slot
 * (a call due while the limit is reached waits, like a campaign's contact). The agent, the line
 * and the number are decided again when the call is due; a call that can no longer be dialled
 * (archived agent, removed configuration) is ended as not placed, saying why.
 */
export const ScheduledCallsLive = Layer.scopedDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const configs = yield* TelephonyConfigs
  const preflight = yield* makeCallPreflight
  const deps = yield* makeDialingDeps
  const { rows, settings } = deps

  const startOne = (id: number, organizationId: OrganizationId) =>
    Effect.gen(function*() {
      const [current] = yield* sql<{
        workflow_id: WorkflowId
        use_draft: boolean
        phone_number: string
        telephony_configuration_id: TelephonyConfigId | null
        from_phone_number_id: number | null
      }>`
        SELECT workflow_id, use_draft, phone_number, telephony_configuration_id, from_phone_number_id
        FROM calls WHERE id = ${id} AND state = 'scheduled'`
      if (!current) return
      const resolved = yield* resolveCall(rows, configs, preflight, organizationId, {
        agent: { _tag: "ById", id: current.workflow_id },
        useDraft: current.use_draft,
        phoneNumber: current.phone_number,
        telephonyConfigurationId: current.telephony_configuration_id,
        fromPhoneNumberId: current.from_phone_number_id
      }).pipe(Effect.either)
      const now = yield* Clock.currentTimeMillis
      if (resolved._tag === "Left") {
        yield* rows.markNotPlaced(id, resolved.left.message, now)
        return
      }
      const opened = yield* sql.withTransaction(Effect.gen(function*() {
        yield* rows.lockOrganization(organizationId)
        const call = yield* rows.takeScheduled(id)
        if (!call) return undefined
        if ((yield* rows.liveCalls(organizationId)) >= settings.orgMaxConcurrentCalls) return undefined
        return yield* rows.open(id, resolved.right.line, now, callDeadline(settings, now))
      }))
      if (opened) {
        yield* dialOpenedCall(deps, opened, resolved.right.account, resolved.right.line, resolved.right.phoneNumber)
      }
    }).pipe(
      Effect.withSpan("Calls.scheduled", { root: true, attributes: { "call.id": id } }),
      Effect.catchAllCause((cause) => Effect.logError("placing a scheduled call failed", { call_id: id }, cause))
    )

  const look = Effect.gen(function*() {
    const due = yield* rows.due(yield* Clock.currentTimeMillis, BATCH)
    yield* Effect.forEach(due, (call) => startOne(call.id, call.organization_id), { concurrency: 4, discard: true })
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("scheduled calls look failed", cause)))

  yield* look.pipe(
    Effect.zipRight(Effect.sleep(settings.pollMillis)),
    Effect.forever,
    Effect.forkScoped
  )
}))
