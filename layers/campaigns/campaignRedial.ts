import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { RedialInput } from "../../services/Campaigns.ts"
import { logEntry } from "../../src/campaigns/campaignLog.ts"
import { mergeRetry } from "../../src/campaigns/campaignSettings.ts"
import { isFinal } from "../../src/campaigns/campaignState.ts"
import { Conflict, ValidationFailed } from "../../src/domain/errors.ts"
import type { CampaignId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { makeCampaignLookups } from "./campaignLookups.ts"
import { toView } from "./campaignRows.ts"

const redialOutcomes = {
  retry_on_busy: "busy",
  retry_on_no_answer: "no-answer",
  retry_on_voicemail: "voicemail",
  retry_on_failed: "failed"
} as const

/** `Campaigns.redial`: a new campaign of a finished one's contacts whose last outcome is one of the reasons asked. */
export const makeCampaignRedial = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { findRow } = yield* makeCampaignLookups

  const redial = Effect.fn("Campaigns.redial")(function*(principal: Principal, id: CampaignId, input: RedialInput) {
    const parent = yield* findRow(principal.organizationId, id)
    if (!isFinal(parent.state)) {
      return yield* new Conflict({
        message:
          `Cannot redial a campaign that is ${parent.state}; redial is allowed once it is completed, cancelled or failed`
      })
    }
    if (parent.redialed_campaign_id !== null) {
      return yield* new Conflict({
        message: `Campaign ${id} was already redialed as campaign ${parent.redialed_campaign_id}`
      })
    }
    const outcomes = Object.entries(redialOutcomes).filter(([flag]) => input[flag as keyof RedialInput] === true).map(
      ([, outcome]) => outcome
    )
    if (outcomes.length === 0) {
      return yield* ValidationFailed.single(
        ["body"],
        "Choose at least one reason to redial: retry_on_busy, retry_on_no_answer, retry_on_voicemail or retry_on_failed"
      )
    }
    const retryConfig = mergeRetry(parent.retry_config, input.retry_config ?? undefined)
    const name = input.name ?? `${parent.name} (redial)`
    const childId = yield* sql.withTransaction(Effect.gen(function*() {
      const [child] = yield* sql<{ id: CampaignId }>`
        INSERT INTO campaigns (organization_id, workflow_id, telephony_configuration_id, name, source_type, source_id,
                               source_columns, default_region, retry_config, max_concurrency, rate_limit_per_second,
                               schedule_config, circuit_breaker, parent_campaign_id, calling_hours, contact_zones,
                               caller_id_pool, voicemail)
        SELECT organization_id, workflow_id, telephony_configuration_id, ${name}, source_type, source_id,
               source_columns, default_region, ${JSON.stringify(retryConfig)}::jsonb, max_concurrency,
               rate_limit_per_second, schedule_config, circuit_breaker, id, calling_hours, contact_zones, caller_id_pool,
               voicemail
        FROM campaigns WHERE id = ${id}
        RETURNING id`
      const childId = child!.id
      const copied = yield* sql<{ count: number }>`
        WITH copied AS (
          INSERT INTO campaign_contacts (campaign_id, row_number, phone_number, context, greeting_override, time_zones)
          SELECT ${childId}, row_number, phone_number, context, greeting_override, time_zones
          FROM campaign_contacts
          WHERE campaign_id = ${id} AND last_outcome IN ${sql.in(outcomes)}
          ORDER BY id
          RETURNING 1
        )
        SELECT count(*)::int AS count FROM copied`
      const count = copied[0]?.count ?? 0
      if (count === 0) {
        return yield* ValidationFailed.single(
          ["body"],
          `No contact of campaign ${id} ended with ${outcomes.join(", ")}; there is nobody to redial`
        )
      }
      const entry = logEntry(
        new Date(yield* Clock.currentTimeMillis),
        "info",
        "redial_created",
        `${count} contacts of campaign ${id} whose last outcome was ${outcomes.join(", ")}`
      )
      yield* sql`
        UPDATE campaigns SET total_rows = ${count}, total_queued_count = ${count}, import_contacts = ${count},
                             logs = ${JSON.stringify([entry])}::jsonb
        WHERE id = ${childId}`
      const parentEntry = logEntry(
        new Date(yield* Clock.currentTimeMillis),
        "info",
        "redialed",
        `Redialed as campaign ${childId} (${count} contacts)`
      )
      const linked = yield* sql`
        UPDATE campaigns SET redialed_campaign_id = ${childId}, logs = logs || ${JSON.stringify([parentEntry])}::jsonb,
                             updated_at = now()
        WHERE id = ${id} AND redialed_campaign_id IS NULL
        RETURNING id`
      if (linked.length === 0) return yield* new Conflict({ message: `Campaign ${id} was already redialed` })
      return childId
    }))
    return toView(yield* findRow(principal.organizationId, childId))
  }, Effect.catchTag("SqlError", Effect.die))

  return { redial }
})
