import type { PlainMessage } from "../conversation/prompt.ts"
import type { TranscriptTurn } from "../conversation/transcript.ts"

/** The longest whisper said to a transfer's destination: it is heard while the caller waits. */
const MAX_WHISPER_CHARACTERS = 400

/** What the organization's LLM is asked for: a short briefing of the person taking the call. */
export const whisperSchema = {
  type: "object",
  properties: { summary: { type: "string" } },
  required: ["summary"],
  additionalProperties: false
} as const

export const whisperMessages = (transcript: ReadonlyArray<TranscriptTurn>): Array<PlainMessage> => [
  {
    role: "system",
    content: "You brief a colleague who is about to take over a phone call from you. In one or two short " +
      "sentences, say who is calling (if known) and what they want. Answer as JSON: {\"summary\": \"...\"}."
  },
  {
    role: "user",
    content: transcript.map((turn) => `${turn.role === "user" ? "Caller" : "Agent"}: ${turn.text}`).join("\n")
  }
]

/** The model's summary, when it gave a usable one. */
export const whisperOf = (value: unknown): string | null => {
  const summary = value !== null && typeof value === "object" ? (value as { summary?: unknown }).summary : undefined
  return typeof summary === "string" && summary.trim() !== "" ? summary.trim().slice(0, MAX_WHISPER_CHARACTERS) : null
}

/** Without a summary: who is calling and the last thing they said. */
export const fallbackWhisper = (
  transcript: ReadonlyArray<TranscriptTurn>,
  variables: Readonly<Record<string, unknown>>
): string => {
  // An outbound call's party is its `phone_number`; an inbound one's is its `caller_number`.
  const number = variables["phone_number"] ?? variables["caller_number"]
  const who = typeof number === "string" && number !== "" ? `A caller from ${number}` : "A caller"
  const said = transcript.filter((turn) => turn.role === "user" && turn.text.trim() !== "").at(-1)?.text.trim()
  const last = said ? ` Their last words were: "${said.slice(0, MAX_WHISPER_CHARACTERS)}".` : ""
  return `${who} is being transferred to you.${last}`
}
