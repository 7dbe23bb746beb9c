import { Context, type Effect, Schema, type Scope, type Stream } from "effect"
import type { SpeechConnection } from "./ModelSettings.ts"
import type { VoiceSampleRate } from "./VoiceActivity.ts"

/** A speech provider failed; `message` is ours, never the provider's body (it may echo keys or audio). */
export class SpeechFailed extends Schema.TaggedError<SpeechFailed>()("SpeechFailed", {
  provider: Schema.String,
  reason: Schema.Literal("unreachable", "refused", "timeout", "protocol", "unsupported"),
  message: Schema.String
}) {}

/** Times are on the session's audio clock (ms of audio sent before the word). */
export type TranscriptEvent =
  | { readonly _tag: "Interim"; readonly text: string }
  /** Stable text for a stretch of audio; `speechFinal` when the provider also judged the utterance over. */
  | {
    readonly _tag: "Final"
    readonly text: string
    readonly speechFinal: boolean
    readonly startMs: number
    readonly endMs: number
  }
  /** The provider saw the end of an utterance (Deepgram's UtteranceEnd); no text of its own. */
  | { readonly _tag: "UtteranceEnd" }

export interface TranscriptionOptions {
  readonly sampleRate: VoiceSampleRate
  /** Carried to the provider for its usage reports (Deepgram `tag`); the run's reference. */
  readonly tag?: string | undefined
  /** Silence after which the provider marks a result speech-final (Deepgram `endpointing`; default 300). */
  readonly endpointingMs?: number | undefined
  /** Silence after which the provider reports UtteranceEnd (Deepgram `utterance_end_ms`, at least 1000; default 1000). */
  readonly utteranceEndMs?: number | undefined
}

/** One call's live transcription: audio in, transcript events out. Closed with its scope. */
export interface TranscriptionSession {
  /** Mono PCM16 at the session's rate, in order, as it arrives. */
  readonly send: (pcm: Int16Array) => Effect.Effect<void, SpeechFailed>
  /** Asks for everything heard so far to be finalized now (the caller stopped speaking). */
  readonly finalize: Effect.Effect<void, SpeechFailed>
  readonly events: Stream.Stream<TranscriptEvent, SpeechFailed>
  /** Seconds of audio the provider has been sent: what it bills. */
  readonly audioSeconds: Effect.Effect<number>
}

export interface SpeechToTextShape {
  /** Opens a session with the organization's STT provider (`deepgram` live, `openai` transcription). */
  readonly open: (
    connection: SpeechConnection,
    options: TranscriptionOptions
  ) => Effect.Effect<TranscriptionSession, SpeechFailed, Scope.Scope>
}

export class SpeechToText extends Context.Tag("talkgraph/SpeechToText")<SpeechToText, SpeechToTextShape>() {}
