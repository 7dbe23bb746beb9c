import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import * as crypto from "node:crypto"
import { type CallRequest, Calls } from "../../services/Calls.ts"
import { DialerRepo } from "../../services/DialerRepo.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { Telephony } from "../../services/Telephony.ts"
import { TelephonyConfigs } from "../../services/TelephonyConfigs.ts"
import { type Call, callStatusOf, canonicalJson } from "../../src/calls/callRecord.ts"
import { Conflict, NotFound, TooManyRequests } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { SchedulerSettings } from "../campaigns/scheduler/schedulerSettings.ts"
import { makeVoicePreflight } from "../campaigns/voicePreflight.ts"
import { callDeadline, type DialingDeps, dialOpenedCall } from "./callDialing.ts"
import { resolveCall, type VoicePreflight } from "./callLines.ts"
import { type CallRow, makeCallRows } from "./callRows.ts"

/** A slot may free within seconds (calls are short); a client should not hammer the limit meanwhile. */
const FULL_RETRY_AFTER_SECONDS = 5

export const callView = (row: CallRow): Call => ({
  id: Number(row.id),
  agent_id: Number(row.workflow_id),
  status: callStatusOf(row),
  phone_number: row.phone_number,
  caller_number: row.caller_number,
  telephony_configuration_id: row.telephony_configuration_id === null ? null : Number(row.telephony_configuration_id),
  use_draft: row.use_draft,
  variables: row.initial_context,
  scheduled_at: row.scheduled_at,
  run_id: row.run_id === null ? null : Number(row.run_id),
  run_name: row.run_name,
  outcome: row.outcome,
  end_reason: row.end_reason,
  duration_seconds: row.duration_seconds ?? 0,
  error: row.error,
  idempotency_key: row.idempotency_key,
  created_at: row.created_at
})

/** What an idempotency key is bound to: everything in the request that decides the call. */
const fingerprintOf = (request: CallRequest) =>
  crypto.createHash("sha256").update(canonicalJson({
    agent: request.agent,
    use_draft: request.useDraft,
    phone_number: request.phoneNumber,
    variables: request.variables,
    telephony_configuration_id: request.telephonyConfigurationId,
    from_phone_number_id: request.fromPhoneNumberId,
    scheduled_at: request.scheduledAt,
    source: request.source
  })).digest("base64url")

/** The voice preflight campaigns pass, with this resource's name in its message. */
export const makeCallPreflight = Effect.map(
  makeVoicePreflight,
  (check): VoicePreflight => (organizationId, carrier) =>
    check(organizationId, carrier).pipe(
      Effect.mapError((conflict) =>
        new Conflict({
          message: conflict.message.replace("The campaign cannot place calls", "The call cannot be placed")
        })
      )
    )
)

export const makeDialingDeps = Effect.gen(function*() {
  const secrets = yield* SecretBox
  return {
    rows: yield* makeCallRows,
    repo: yield* DialerRepo,
    telephony: yield* Telephony,
    settings: yield* SchedulerSettings,
    publicUrl: yield* PublicUrl,
    sign: secrets.sign
  } satisfies DialingDeps
})

export const CallsLive = Layer.effect(
  Calls,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const configs = yield* TelephonyConfigs
    const preflight = yield* makeCallPreflight
    const deps = yield* makeDialingDeps
    const { rows, settings } = deps

    const replay = (existing: CallRow, fingerprint: string) =>
      existing.request_fingerprint === fingerprint
        ? Effect.succeed({ call: callView(existing), created: false })
        : Effect.fail(
          new Conflict({
            message:
              `Idempotency key "${existing.idempotency_key}" was already used for call ${existing.id} with a different request`
          })
        )

    const place = Effect.fn("Calls.place")(function*(principal: Principal, request: CallRequest) {
      const organizationId = principal.organizationId
      const fingerprint = fingerprintOf(request)
      const key = request.idempotencyKey
      if (key !== null) {
        const existing = yield* rows.byKey(organizationId, key)
        if (existing) return yield* replay(existing, fingerprint)
      }
      const resolved = yield* resolveCall(rows, configs, preflight, organizationId, request)
      const now = yield* Clock.currentTimeMillis
      const scheduled = request.scheduledAt !== null && request.scheduledAt > now
      const stored = {
        organizationId,
        workflowId: resolved.workflowId,
        useDraft: request.useDraft,
        phoneNumber: resolved.phoneNumber,
        variables: request.variables,
        telephonyConfigurationId: request.telephonyConfigurationId,
        fromPhoneNumberId: request.fromPhoneNumberId,
        scheduledAt: request.scheduledAt,
        idempotencyKey: key,
        fingerprint,
        source: request.source
      }
      const outcome = yield* sql.withTransaction(Effect.gen(function*() {
        yield* rows.lockOrganization(organizationId)
        // Two requests with one key queue on the lock; the second finds the first's call here.
        const raced = key === null ? undefined : yield* rows.byKey(organizationId, key)
        if (raced) return { _tag: "Existing", row: raced } as const
        if (scheduled) return { _tag: "Scheduled", id: yield* rows.insert(stored, "scheduled", now) } as const
        // Counted after the lock, as the campaigns' claims count: campaigns' calls and single calls alike.
        if ((yield* rows.liveCalls(organizationId)) >= settings.orgMaxConcurrentCalls) {
          return yield* new TooManyRequests({
            message:
              `The organization's limit of ${settings.orgMaxConcurrentCalls} concurrent calls is reached (campaigns included); try again when a call ends`,
            retryAfterSeconds: FULL_RETRY_AFTER_SECONDS
          })
        }
        const id = yield* rows.insert(stored, "placing", now)
        return {
          _tag: "Opened",
          opened: yield* rows.open(id, resolved.line, now, callDeadline(settings, now))
        } as const
      }))
      if (outcome._tag === "Existing") return yield* replay(outcome.row, fingerprint)
      const id = outcome._tag === "Scheduled" ? outcome.id : outcome.opened.callId
      yield* Effect.annotateCurrentSpan({ "call.id": id, "organization.id": organizationId })
      if (outcome._tag === "Opened") {
        // Once opened, the carrier is asked even if the client goes away: the slot is already taken.
        yield* Effect.uninterruptible(
          dialOpenedCall(deps, outcome.opened, resolved.account, resolved.line, resolved.phoneNumber)
        )
      }
      const row = yield* rows.byId(organizationId, id)
      return { call: callView(row!), created: true }
    }, Effect.catchTag("SqlError", Effect.die))

    const get = Effect.fn("Calls.get")(function*(principal: Principal, id: number) {
      const row = yield* rows.byId(principal.organizationId, id)
      if (!row) return yield* new NotFound({ resource: "Call", id })
      return callView(row)
    }, Effect.catchTag("SqlError", Effect.die))

    return Calls.of({ place, get })
  })
)
