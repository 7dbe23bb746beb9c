import { Context, type Effect } from "effect"

/** Sample rates the voice pipeline runs at: telephony (8 kHz) and wideband (Vonage, browser). */
export type VoiceSampleRate = 8000 | 16000

/** How speech probabilities become turns: LiveKit's and Pipecat's defaults are in this range. */
export interface SpeechSegmentation {
  /** Probability at or above which a window counts as speech. */
  readonly threshold: number
  /** Speech must last this long before it is reported as started (filters clicks and "mm"). */
  readonly minSpeechMs: number
  /** Silence must last this long before speech is reported as ended. */
  readonly minSilenceMs: number
  /** Silence this long inside speech is reported as a pause (shorter than `minSilenceMs`); omitted, never. */
  readonly pauseMs?: number
}

/** Times are on the audio's own clock: milliseconds of audio pushed before the event's sample. */
export type VoiceActivityEvent =
  | { readonly _tag: "SpeechStarted"; readonly atMs: number }
  | { readonly _tag: "SpeechEnded"; readonly atMs: number; readonly speechMs: number }
  /** The caller has been silent for `pauseMs`: the turn may be ending. */
  | { readonly _tag: "SpeechPaused"; readonly atMs: number }
  /** The caller spoke again after a reported pause. */
  | { readonly _tag: "SpeechResumed"; readonly atMs: number }

/** One call's detector: it keeps that call's model state between pushes. */
export interface VoiceActivityDetector {
  /** Feeds the next audio (any length, mono PCM16 at the detector's rate); answers the events it completes. */
  readonly push: (pcm: Int16Array) => Effect.Effect<ReadonlyArray<VoiceActivityEvent>>
  /** Changes segmentation mid-call (a higher threshold while the agent speaks cuts false barge-ins from echo). */
  readonly configure: (segmentation: Partial<SpeechSegmentation>) => void
}

export interface VoiceActivityShape {
  readonly detector: (
    sampleRate: VoiceSampleRate,
    segmentation?: Partial<SpeechSegmentation>
  ) => Effect.Effect<VoiceActivityDetector>
}

/** Silero VAD: one model shared by the process, state per call. */
export class VoiceActivity extends Context.Tag("talkgraph/VoiceActivity")<VoiceActivity, VoiceActivityShape>() {}
