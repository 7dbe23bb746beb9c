/**
 * Why a run ended, stored in `runs.end_reason` and used as the disposition when the workflow
 * defines no disposition codes. Each names its cause so an operator needs no log to read it.
 */
export const EndReasons = [
  "end_call_tool",
  "end_node_reached",
  "max_turns_reached",
  "max_duration_exceeded",
  "idle_timeout",
  "llm_timeout",
  "llm_error",
  "user_ended",
  "user_hangup",
  "speech_error",
  "voicemail",
  /** A cold transfer's destination answered: the caller was handed over and the agent left. */
  "transferred",
  /** A cold transfer's destination did not answer and the carrier's transfer had already taken the caller away from the agent. */
  "transfer_failed"
] as const
export type EndReason = (typeof EndReasons)[number]

export interface Ending {
  readonly reason: EndReason
  /** What went wrong, in our words (never a provider's raw text); only for failures. */
  readonly error: string | null
}

/** Endings where the run did not finish as designed; the run row is marked `failed`. */
export const isFailure = (reason: EndReason): boolean =>
  reason === "llm_timeout" || reason === "llm_error" || reason === "speech_error"
