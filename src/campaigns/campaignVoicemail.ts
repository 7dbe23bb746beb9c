import type { FieldProblem } from "../domain/errors.ts"
import { JsonObject } from "../domain/wireTypes.ts"
import { voicemailPolicy, voicemailSettingProblems } from "../voice/voicemailPolicy.ts"

/**
 * A campaign's own voicemail policy, the shape of an agent's `workflow_configurations.voicemail`.
 * Decoded as any object and checked by `campaignVoicemailProblems`, so a campaign's setting is
 * refused by the very rules (and messages) an agent's is; the document still lists its fields.
 */
export const CampaignVoicemail = JsonObject.annotations({
  identifier: "CampaignVoicemail",
  description:
    "What the campaign's calls do when they reach an answering machine, instead of what the agent's `workflow_configurations.voicemail` says",
  jsonSchema: {
    properties: {
      detection: { type: "string", enum: ["off", "in_call"] },
      action: { type: "string", enum: ["hang_up", "leave_message"] },
      message_text: { anyOf: [{ type: "string", minLength: 1, maxLength: 1000 }, { type: "null" }] },
      message_recording_id: { anyOf: [{ type: "string", minLength: 1 }, { type: "null" }] }
    },
    additionalProperties: false
  }
})
export type CampaignVoicemail = typeof CampaignVoicemail.Type

/** Every problem with a requested campaign voicemail setting, located under the request body. */
export const campaignVoicemailProblems = (
  voicemail: CampaignVoicemail | null | undefined
): ReadonlyArray<FieldProblem> =>
  voicemailSettingProblems({ voicemail }).map((problem) => ({
    loc: ["body", ...problem.path],
    msg: problem.message,
    type: problem.type
  }))

/** The recording a checked setting leaves as its message, if any. */
export const campaignVoicemailRecordingId = (voicemail: CampaignVoicemail | null): string | null =>
  voicemail === null ? null : voicemailPolicy({ voicemail }).messageRecordingId
