import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { UpdateCampaignInput } from "../../services/Campaigns.ts"
import { logEntry } from "../../src/campaigns/campaignLog.ts"
import { editableStates } from "../../src/campaigns/campaignState.ts"
import { Conflict } from "../../src/domain/errors.ts"
import type { CampaignId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { makeCampaignLookups } from "./campaignLookups.ts"
import { toView } from "./campaignRows.ts"
import { mergedSettings } from "./mergedSettings.ts"
import { makeVoicemailRecordingCheck } from "./voicemailRecordingCheck.ts"

/** `Campaigns.update`: settings change only while the campaign is created or paused, logged with what changed. */
export const makeCampaignSettingsUpdate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { findRow, poolNumbersExist, telephonyExists } = yield* makeCampaignLookups
  const voicemailRecordingExists = yield* makeVoicemailRecordingCheck

  const update = Effect.fn("Campaigns.update")(
    function*(principal: Principal, id: CampaignId, input: UpdateCampaignInput) {
      const current = yield* findRow(principal.organizationId, id)
      if (!editableStates.includes(current.state)) {
        return yield* new Conflict({
          message:
            `Cannot change the settings of a campaign that is ${current.state}; settings change only while it is created or paused`
        })
      }
      yield* telephonyExists(principal.organizationId, input.telephony_configuration_id)
      const settings = yield* mergedSettings(current, input)
      yield* poolNumbersExist(
        principal.organizationId,
        input.telephony_configuration_id === undefined
          ? current.telephony_configuration_id
          : input.telephony_configuration_id,
        settings.caller_id_pool
      )
      // Only a setting the request gives is checked: one already stored was checked when it was given.
      yield* voicemailRecordingExists(principal.organizationId, input.voicemail)
      const changed = Object.keys(input).filter((key) => (input as Record<string, unknown>)[key] !== undefined)
      const entry = logEntry(
        new Date(yield* Clock.currentTimeMillis),
        "info",
        "settings_updated",
        `Settings changed: ${changed.join(", ") || "none"}`
      )
      const updated = yield* sql`
      UPDATE campaigns
      SET name = ${input.name ?? current.name},
          telephony_configuration_id = ${
        input.telephony_configuration_id === undefined
          ? current.telephony_configuration_id
          : input.telephony_configuration_id
      },
          retry_config = ${JSON.stringify(settings.retry_config)}::jsonb,
          max_concurrency = ${settings.max_concurrency},
          rate_limit_per_second = ${settings.rate_limit_per_second},
          schedule_config = ${
        settings.schedule_config === null ? null : JSON.stringify(settings.schedule_config)
      }::jsonb,
          calling_hours = ${settings.calling_hours === null ? null : JSON.stringify(settings.calling_hours)}::jsonb,
          caller_id_pool = ${settings.caller_id_pool === null ? null : JSON.stringify(settings.caller_id_pool)}::jsonb,
          circuit_breaker = ${JSON.stringify(settings.circuit_breaker)}::jsonb,
          voicemail = ${settings.voicemail === null ? null : JSON.stringify(settings.voicemail)}::jsonb,
          logs = logs || ${JSON.stringify([entry])}::jsonb,
          updated_at = now()
      WHERE id = ${id} AND organization_id = ${principal.organizationId} AND state IN ${sql.in(editableStates)}
      RETURNING id`
      if (updated.length === 0) {
        const now = yield* findRow(principal.organizationId, id)
        return yield* new Conflict({ message: `Cannot change the settings of a campaign that is ${now.state}` })
      }
      return toView(yield* findRow(principal.organizationId, id))
    },
    Effect.catchTag("SqlError", Effect.die)
  )

  return { update }
})
