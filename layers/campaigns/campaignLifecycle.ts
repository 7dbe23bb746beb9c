import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect } from "effect"
import { CampaignDoorbell } from "../../services/CampaignDoorbell.ts"
import { TelephonyConfigs } from "../../services/TelephonyConfigs.ts"
import { logEntry } from "../../src/campaigns/campaignLog.ts"
import { type CampaignCommand, canApply, refusal, transitions } from "../../src/campaigns/campaignState.ts"
import {
  cancelledWhileLoading,
  importProgress,
  startAfterFailedImport,
  startWhileLoading
} from "../../src/campaigns/contactImport.ts"
import { Conflict } from "../../src/domain/errors.ts"
import type { CampaignId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { makeCampaignLookups } from "./campaignLookups.ts"
import { type CampaignRow, toView } from "./campaignRows.ts"
import { makeVoicePreflight } from "./voicePreflight.ts"

/** The command's refusal for the campaign as it is, if any: its state, or contacts not all loaded for a start. */
const checkAllowed = (row: CampaignRow, command: CampaignCommand) => {
  if (!canApply(command, row.state)) return Effect.fail(new Conflict({ message: refusal(command, row.state) }))
  if (command !== "start" || row.import_status === "ready") return Effect.void
  const progress = importProgress(row)
  return Effect.fail(
    new Conflict({
      message: row.import_status === "loading" ? startWhileLoading(progress) : startAfterFailedImport(progress)
    })
  )
}

/** The lifecycle commands (start, pause, resume, cancel); each rings the dialer's doorbell once applied. */
export const makeCampaignLifecycle = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const telephony = yield* TelephonyConfigs
  const preflight = yield* makeVoicePreflight
  const doorbell = yield* CampaignDoorbell
  const { findRow } = yield* makeCampaignLookups

  /**
   * Applies a lifecycle command in one statement: the UPDATE only matches in an allowed state, so
   * two racing commands cannot both succeed. `extra` adds the command's own column changes;
   * cancelling also withdraws the contacts not yet called, in the same statement.
   */
  const transition = (
    principal: Principal,
    id: CampaignId,
    command: CampaignCommand,
    message: string,
    extra: Statement.Statement<unknown> | undefined = undefined,
    condition: Statement.Statement<unknown> | undefined = undefined
  ) =>
    Effect.gen(function*() {
      const { from, to, event } = transitions[command]
      const entry = logEntry(new Date(yield* Clock.currentTimeMillis), "info", event, message)
      const updated = yield* sql<{ id: number }>`
        WITH moved AS (
          UPDATE campaigns
          SET state = ${to}, logs = logs || ${JSON.stringify([entry])}::jsonb, updated_at = now()
              ${extra === undefined ? sql`` : sql`, ${extra}`}
          WHERE id = ${id} AND organization_id = ${principal.organizationId} AND state IN ${sql.in(from)}
                ${condition === undefined ? sql`` : sql`AND ${condition}`}
          RETURNING id
        ), withdrawn AS (
          UPDATE campaign_contacts SET state = 'cancelled', updated_at = now()
          WHERE ${to === "cancelled"} AND campaign_id IN (SELECT id FROM moved) AND state = 'pending'
        )
        SELECT id FROM moved`
      if (updated.length === 0) {
        const current = yield* findRow(principal.organizationId, id)
        yield* checkAllowed(current, command)
        return yield* new Conflict({ message: refusal(command, current.state) })
      }
      // The dialer here starts, wakes or stops the campaign's actor now rather than at its next poll.
      yield* doorbell.changed(id)
    })

  /** The outbound configuration a start or resume would dial through, once every call could succeed on it. */
  const checkedOutbound = (principal: Principal, current: CampaignRow) =>
    Effect.gen(function*() {
      const outbound = yield* telephony.outbound(principal.organizationId, current.telephony_configuration_id)
      yield* preflight(principal.organizationId, {
        provider: outbound.config.provider,
        apiBaseUrl: outbound.api_base_url
      })
      return outbound
    })

  const start = Effect.fn("Campaigns.start")(function*(principal: Principal, id: CampaignId) {
    const current = yield* findRow(principal.organizationId, id)
    yield* checkAllowed(current, "start")
    const outbound = yield* checkedOutbound(principal, current)
    // The configuration is bound at start, so it cannot be deleted from under a running campaign.
    yield* transition(
      principal,
      id,
      "start",
      `Campaign started with ${current.total_rows ?? 0} contacts through "${outbound.name}"`,
      sql`started_at = now(), telephony_configuration_id = ${outbound.id}`,
      // Checked in the same statement: a campaign whose contacts are not all stored never runs.
      sql`import_status = 'ready'`
    )
    return toView(yield* findRow(principal.organizationId, id))
  }, Effect.catchTag("SqlError", Effect.die))

  const pause = Effect.fn("Campaigns.pause")(function*(principal: Principal, id: CampaignId) {
    yield* transition(principal, id, "pause", "Campaign paused; calls in progress finish, no new calls are placed")
    return toView(yield* findRow(principal.organizationId, id))
  }, Effect.catchTag("SqlError", Effect.die))

  const resume = Effect.fn("Campaigns.resume")(function*(principal: Principal, id: CampaignId) {
    const current = yield* findRow(principal.organizationId, id)
    yield* checkAllowed(current, "resume")
    yield* checkedOutbound(principal, current)
    yield* transition(principal, id, "resume", "Campaign resumed")
    return toView(yield* findRow(principal.organizationId, id))
  }, Effect.catchTag("SqlError", Effect.die))

  const cancel = Effect.fn("Campaigns.cancel")(function*(principal: Principal, id: CampaignId) {
    const entry = logEntry(
      new Date(yield* Clock.currentTimeMillis),
      "info",
      transitions.cancel.event,
      cancelledWhileLoading
    )
    // While loading there is nothing to withdraw: the import stops at its next statement and clears what it stored.
    const stoppedImport = yield* sql`
      UPDATE campaigns
      SET state = 'cancelled', completed_at = now(), import_status = 'failed',
          import_errors = ${JSON.stringify([cancelledWhileLoading])}::jsonb, import_heartbeat_at = now(),
          logs = logs || ${JSON.stringify([entry])}::jsonb, updated_at = now()
      WHERE id = ${id} AND organization_id = ${principal.organizationId} AND state = 'created' AND import_status = 'loading'
      RETURNING id`
    if (stoppedImport.length === 0) {
      yield* transition(
        principal,
        id,
        "cancel",
        "Campaign cancelled; contacts not yet called will not be called",
        sql`completed_at = now()`
      )
    }
    return toView(yield* findRow(principal.organizationId, id))
  }, Effect.catchTag("SqlError", Effect.die))

  return { start, pause, resume, cancel }
})
