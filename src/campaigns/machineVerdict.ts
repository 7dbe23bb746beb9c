import type { CallOutcome } from "./retryPolicy.ts"

/** Answering-machine detection's verdict on who picked up. */
export type AnsweredBy = "human" | "machine"

/**
 * A call that completed after detection judged a machine had answered it reached voicemail,
 * whichever of the carrier's events carried the verdict: Twilio repeats it on the final callback,
 * while Vonage, Telnyx and Plivo send it once, mid-call, and end the call later as `completed`.
 */
export const outcomeWithVerdict = (outcome: CallOutcome, answeredBy: AnsweredBy | null | undefined): CallOutcome =>
  outcome === "completed" && answeredBy === "machine" ? "voicemail" : outcome
