import { Context, type Effect, Schema } from "effect"
import type { VoiceSampleRate } from "./VoiceActivity.ts"

/** The configured end-of-turn model cannot be used (missing, unreadable, not smart-turn's shape) or failed to answer. */
export class TurnModelFailed extends Schema.TaggedError<TurnModelFailed>()("TurnModelFailed", {
  path: Schema.String,
  message: Schema.String
}) {}

export interface TurnModelShape {
  /** A model file is configured; without one the heuristic endpointing decides every turn. */
  readonly configured: boolean
  /** P(the caller's turn is complete) from their recent audio (mono PCM16; the last 8 s are read). */
  readonly completeProbability: (pcm: Int16Array, sampleRate: VoiceSampleRate) => Effect.Effect<number, TurnModelFailed>
}

/** An ONNX end-of-turn classifier over the caller's audio (Pipecat's smart-turn v3 or one of its shape). */
export class TurnModel extends Context.Tag("talkgraph/TurnModel")<TurnModel, TurnModelShape>() {}
