import { Effect } from "effect"
import { RecordingCatalog } from "../../services/Recordings.ts"
import { type CampaignVoicemail, campaignVoicemailRecordingId } from "../../src/campaigns/campaignVoicemail.ts"
import { ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"

/** A campaign's voicemail message left as a recording must name one of the organization's clips, as an agent's must. */
export const makeVoicemailRecordingCheck = Effect.gen(function*() {
  const recordings = yield* RecordingCatalog
  return (organizationId: OrganizationId, voicemail: CampaignVoicemail | null | undefined) =>
    Effect.gen(function*() {
      const id = campaignVoicemailRecordingId(voicemail ?? null)
      if (id === null || (yield* recordings.existing(organizationId, [id])).has(id)) return
      return yield* ValidationFailed.single(
        ["body", "voicemail", "message_recording_id"],
        `"${id}" is not a recording of this organization; upload it with POST /api/v1/workflow-recordings first`
      )
    })
})
