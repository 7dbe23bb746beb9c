import { Context, type Effect, type Option } from "effect"
import type { ValidationFailed } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { LlmConnection } from "./LlmGenerator.ts"

/** A model section as a client sees it: the key is masked (`****abcd`), never returned. */
export interface ModelSectionView {
  readonly provider: string
  readonly model: string | null
  readonly base_url: string | null
  readonly api_key: string | null
  readonly api_key_set: boolean
  readonly voice?: string | null
  readonly language?: string | null
}

export interface ModelSettingsView {
  readonly llm: ModelSectionView | null
  readonly stt: ModelSectionView | null
  readonly tts: ModelSectionView | null
  readonly embeddings: ModelSectionView | null
  readonly updated_at: Date | null
}

/**
 * A section in a PUT. `api_key` omitted (or equal to the masked value) keeps the stored key.
 */
export interface ModelSectionInput {
  readonly provider: string
  readonly model?: string | undefined
  readonly base_url?: string | null | undefined
  readonly api_key?: string | undefined
  readonly voice?: string | null | undefined
  readonly language?: string | null | undefined
}

/** A PUT: an omitted section is kept as stored. */
export interface ModelSettingsInput {
  readonly llm?: ModelSectionInput | undefined
  readonly stt?: ModelSectionInput | undefined
  readonly tts?: ModelSectionInput | undefined
  readonly embeddings?: ModelSectionInput | undefined
}

/** Decrypted speech settings, for the voice pipeline. */
export interface SpeechConnection {
  readonly provider: string
  readonly model: string | null
  readonly apiKey: string | null
  readonly baseUrl: string | null
  readonly voice: string | null
  readonly language: string | null
}

/** Decrypted embeddings settings, for knowledge-base indexing and retrieval. */
export interface EmbeddingsConnection {
  readonly model: string
  readonly apiKey: string | null
  readonly baseUrl: string | null
}

/** An organization's LLM / STT / TTS settings, keys encrypted at rest. */
export interface ModelSettingsShape {
  readonly get: (principal: Principal) => Effect.Effect<ModelSettingsView>
  readonly put: (principal: Principal, input: ModelSettingsInput) => Effect.Effect<ModelSettingsView, ValidationFailed>
  /** Internal (never exposed over HTTP): the organization's LLM with its key decrypted, if configured. */
  readonly llmFor: (organizationId: number) => Effect.Effect<Option.Option<LlmConnection>>
  /** Internal: decrypted STT or TTS settings, if configured. */
  readonly speechFor: (organizationId: number, kind: "stt" | "tts") => Effect.Effect<Option.Option<SpeechConnection>>
  /** Internal: the OpenAI-compatible embeddings endpoint with its key decrypted, if configured. */
  readonly embeddingsFor: (organizationId: number) => Effect.Effect<Option.Option<EmbeddingsConnection>>
}

export class ModelSettings extends Context.Tag("talkgraph/ModelSettings")<ModelSettings, ModelSettingsShape>() {}
