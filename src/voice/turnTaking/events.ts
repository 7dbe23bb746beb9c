/**
 * What happens in a call, as the turn-taking reducer hears it. `at` is the call's clock in ms
 * (the interpreter's `Clock`); for speech it is when the audio itself started or stopped, not when
 * the detector noticed.
 */
export type TurnEvent =
  | { readonly _tag: "CallerSpeechStarted"; readonly at: number }
  | { readonly _tag: "CallerSpeechStopped"; readonly at: number }
  /**
   * The end-of-turn model's answer for the caller's audio up to `speechStoppedAt` (the stop it was
   * asked about): P(the turn is complete).
   */
  | {
    readonly _tag: "TurnPrediction"
    readonly at: number
    readonly speechStoppedAt: number
    readonly complete: number
  }
  | { readonly _tag: "TranscriptInterim"; readonly at: number; readonly text: string }
  /**
   * A final transcript piece. `settled`: it answers the last flush, so everything the caller said
   * before they stopped has now been transcribed (its text may be empty: noise).
   */
  | { readonly _tag: "TranscriptFinal"; readonly at: number; readonly text: string; readonly settled: boolean }
  | { readonly _tag: "TranscriptionFailed"; readonly at: number; readonly reason: string }
  /** The reply's first audio reached the carrier; `interruptible` is what its node allows. */
  | {
    readonly _tag: "ReplyAudioStarted"
    readonly at: number
    readonly generation: number
    readonly interruptible: boolean
  }
  /** The reply's words are all said (model done, audio played). */
  | {
    readonly _tag: "ReplyCompleted"
    readonly at: number
    readonly generation: number
    readonly askedQuestion: boolean
    /** The conversation reached its end (an end node, a goodbye): the interpreter hangs up. */
    readonly endsCall: boolean
  }
  | {
    readonly _tag: "ReplyFailed"
    readonly at: number
    readonly generation: number
    readonly provider: "llm" | "tts"
    readonly reason: string
    /** Some of the reply was heard already: retrying would repeat it. */
    readonly heard: boolean
  }
  | { readonly _tag: "CallerHungUp"; readonly at: number }
  /**
   * The caller finished a keypad entry (`digits`; `text` says it for the model). It is a whole
   * turn at once: no endpointing, and it stops whatever the agent is saying (a caller who presses
   * a key mid-menu has chosen).
   */
  | { readonly _tag: "KeypadEntry"; readonly at: number; readonly digits: string; readonly text: string }
  | { readonly _tag: "Tick"; readonly at: number }

/** Why a reply is stopped. */
export type CancelReason = "interrupted" | "caller-continued" | "call-ended"

export type FallbackReason = "no-transcript" | "provider-failed"

export type CallEndReason = "user_hangup" | "idle_timeout" | "max_duration_exceeded" | "provider_failures"

/** When a caller's turn ended and why then: the per-turn trace. */
export interface TurnDecision {
  readonly generation: number
  readonly text: string
  readonly speechStartedAt: number
  readonly speechStoppedAt: number
  /** When the transcript settled; null when the turn was taken without it (a timed-out STT with interim words). */
  readonly transcriptAt: number | null
  readonly decidedAt: number
  readonly endpointingMs: number
  /** The turn was keys pressed, not words: these keys. */
  readonly keypad?: string
}

/** What the interpreter must do. */
export type TurnCommand =
  /** Ask the transcription for everything said so far, now. */
  | { readonly _tag: "FlushTranscription" }
  /** Ask the end-of-turn model, if the call has one, whether the caller's audio so far ends their turn. */
  | { readonly _tag: "PredictTurnEnd"; readonly speechStoppedAt: number }
  | { readonly _tag: "RestartTranscription" }
  /**
   * Answer `text` (null: open the call). A `held` reply is prepared while the caller may still go
   * on — model and speech run, nothing is heard until `ReleaseReply`.
   */
  | {
    readonly _tag: "StartReply"
    readonly generation: number
    readonly text: string | null
    readonly held: boolean
    readonly attempt: number
  }
  | { readonly _tag: "ReleaseReply"; readonly generation: number }
  | { readonly _tag: "CancelReply"; readonly generation: number; readonly reason: CancelReason }
  /** Stop the agent's audio where it is (the carrier's buffer cleared), keeping its place. */
  | { readonly _tag: "PauseReply"; readonly generation: number }
  /** Go on from the start of the sentence that was cut (a cut word is not resumed mid-word). */
  | { readonly _tag: "ResumeReply"; readonly generation: number }
  | { readonly _tag: "SayFallback"; readonly generation: number; readonly reason: FallbackReason }
  /** The agent is speaking (`true`) or not: voice detection guards against the agent's own echo meanwhile. */
  | { readonly _tag: "EchoGuard"; readonly on: boolean }
  | { readonly _tag: "TurnEnded"; readonly decision: TurnDecision }
  | { readonly _tag: "ProviderFailed"; readonly provider: "llm" | "tts" | "stt"; readonly reason: string }
  /** End the call; with `goodbye` the agent says its closing line first. */
  | { readonly _tag: "EndCall"; readonly reason: CallEndReason; readonly goodbye: boolean }
