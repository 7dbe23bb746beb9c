/**
 * What an agent does when an outbound call reaches an answering machine, from its
 * `workflow_configurations.voicemail`:
 *   { detection: "off" | "in_call", action: "hang_up" | "leave_message", message_text?, message_recording_id? }
 * Detection by the carrier is the telephony configuration's `amd_enabled`; this is the call's own.
 */
export type VoicemailAction = "hang_up" | "leave_message"

export interface VoicemailPolicy {
  readonly detection: "off" | "in_call"
  readonly action: VoicemailAction
  /** The message, with {{variables}} rendered as greetings are; null when a recording is left instead. */
  readonly messageText: string | null
  readonly messageRecordingId: string | null
}

export const voicemailOff: VoicemailPolicy = {
  detection: "off",
  action: "hang_up",
  messageText: null,
  messageRecordingId: null
}

export interface VoicemailSettingProblem {
  readonly path: ReadonlyArray<string>
  readonly message: string
  readonly type: string
}

const MESSAGE_MAX_CHARS = 1000
const FIELDS = ["detection", "action", "message_text", "message_recording_id"]

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Every problem with `workflow_configurations.voicemail` (absent is fine: detection is off). */
export const voicemailSettingProblems = (
  configurations: Readonly<Record<string, unknown>> | null | undefined
): ReadonlyArray<VoicemailSettingProblem> => {
  const value = configurations?.["voicemail"]
  if (value === undefined || value === null) return []
  if (!isRecord(value)) return [{ path: ["voicemail"], message: "voicemail must be an object", type: "object_type" }]
  const problems: Array<VoicemailSettingProblem> = []
  for (const key of Object.keys(value)) {
    if (!FIELDS.includes(key)) {
      problems.push({
        path: ["voicemail", key],
        message: `unknown field; known: ${FIELDS.join(", ")}`,
        type: "extra_forbidden"
      })
    }
  }
  if (value["detection"] !== undefined && value["detection"] !== "off" && value["detection"] !== "in_call") {
    problems.push({
      path: ["voicemail", "detection"],
      message: "detection must be off or in_call (carrier detection is the telephony configuration's amd_enabled)",
      type: "literal_error"
    })
  }
  const action = value["action"]
  if (action !== undefined && action !== "hang_up" && action !== "leave_message") {
    problems.push({
      path: ["voicemail", "action"],
      message: "action must be hang_up or leave_message",
      type: "literal_error"
    })
  }
  const text = value["message_text"]
  const recording = value["message_recording_id"]
  if (
    text !== undefined && text !== null &&
    (typeof text !== "string" || text.trim() === "" || text.length > MESSAGE_MAX_CHARS)
  ) {
    problems.push({
      path: ["voicemail", "message_text"],
      message: `message_text must be text of 1 to ${MESSAGE_MAX_CHARS} characters`,
      type: "string_type"
    })
  }
  if (recording !== undefined && recording !== null && (typeof recording !== "string" || recording.trim() === "")) {
    problems.push({
      path: ["voicemail", "message_recording_id"],
      message: "message_recording_id must be a recording id",
      type: "string_type"
    })
  }
  const hasText = typeof text === "string" && text.trim() !== ""
  const hasRecording = typeof recording === "string" && recording.trim() !== ""
  if (action === "leave_message" && hasText === hasRecording) {
    problems.push({
      path: ["voicemail"],
      message: "leave_message needs exactly one of message_text and message_recording_id",
      type: "value_error"
    })
  }
  return problems
}

/** The policy of a checked configuration. */
export const voicemailPolicy = (
  configurations: Readonly<Record<string, unknown>> | null | undefined
): VoicemailPolicy => {
  const value = configurations?.["voicemail"]
  if (!isRecord(value) || value["detection"] !== "in_call") return voicemailOff
  const text = value["message_text"]
  const recording = value["message_recording_id"]
  return {
    detection: "in_call",
    action: value["action"] === "leave_message" ? "leave_message" : "hang_up",
    messageText: typeof text === "string" && text.trim() !== "" ? text : null,
    messageRecordingId: typeof recording === "string" && recording.trim() !== "" ? recording : null
  }
}

/**
 * The policy a call follows: its campaign's own `voicemail` setting when the campaign has one
 * (checked when the campaign was saved), else its agent's.
 */
export const callVoicemailPolicy = (
  agentConfigurations: Readonly<Record<string, unknown>> | null | undefined,
  campaignVoicemail: Readonly<Record<string, unknown>> | null | undefined
): VoicemailPolicy =>
  voicemailPolicy(
    campaignVoicemail === null || campaignVoicemail === undefined
      ? agentConfigurations
      : { voicemail: campaignVoicemail }
  )
