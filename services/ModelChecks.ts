import { Context, type Effect } from "effect"
import type { UpstreamFailed, ValidationFailed } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"

export type ModelKind = "llm" | "stt" | "tts"

/** What one request to a provider gave back, for a person checking their settings. */
export interface ModelCheckResult {
  readonly kind: ModelKind
  readonly provider: string
  readonly model: string | null
  /** From the request's start to the provider's whole answer. */
  readonly latency_ms: number
  /** LLM: the model's reply to a short prompt. */
  readonly reply?: string
  /** STT: what the provider heard in the test phrase, and that phrase. */
  readonly transcript?: string
  readonly phrase?: string
  /** TTS: the spoken test phrase as a mono PCM16 WAV file. */
  readonly audio_wav_base64?: string
  readonly audio_bytes?: number
  readonly audio_duration_ms?: number
}

/**
 * One real request with the organization's saved LLM, STT or TTS settings, through the same
 * provider clients (and outbound policy) calls use. No configuration is a ValidationFailed; a
 * provider failure is an UpstreamFailed naming the provider, never what went wrong (the log has it).
 */
export interface ModelChecksShape {
  readonly check: (
    principal: Principal,
    kind: ModelKind
  ) => Effect.Effect<ModelCheckResult, ValidationFailed | UpstreamFailed>
}

export class ModelChecks extends Context.Tag("talkgraph/ModelChecks")<ModelChecks, ModelChecksShape>() {}
