import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Timestamp } from "../../../src/domain/wireTypes.ts"
import { baseUrlProblem } from "../../../src/outbound/baseUrls.ts"
import { HttpForbidden, HttpUpstreamFailed, HttpValidationFailed } from "../../errors.ts"
import { bodySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

/** Requests go to fixed paths under it: no query string, fragment or credentials (`baseUrlProblem`). */
const HttpUrl = Schema.String.pipe(
  Schema.maxLength(500),
  Schema.filter((value) => {
    const problem = baseUrlProblem(value)
    return problem === null || `base_url ${problem}`
  })
)

const Text = (max: number) => Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(max))

/** `provider: "openai"` covers every OpenAI-compatible endpoint through `base_url`. */
export const LlmSettingsRequest = Schema.Struct({
  provider: Schema.Literal("openai"),
  model: Text(200),
  api_key: Schema.optional(Text(1000)),
  base_url: Schema.optional(Schema.NullOr(HttpUrl))
})

export const SpeechSettingsRequest = Schema.Struct({
  provider: Schema.String.pipe(
    Schema.pattern(/^[a-z0-9_-]{1,50}$/, { message: () => "must be a provider name such as deepgram or elevenlabs" })
  ),
  model: Schema.optional(Text(200)),
  api_key: Schema.optional(Text(1000)),
  base_url: Schema.optional(Schema.NullOr(HttpUrl)),
  voice: Schema.optional(Schema.NullOr(Text(200))),
  language: Schema.optional(Schema.NullOr(Text(35)))
})

// `exact` keeps a wrong section reported field by field instead of as "expected undefined".
const section = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** An omitted section stays as stored; an omitted api_key keeps the stored key. */
export const ModelConfigurationsRequest = bodySchema("ModelConfigurations", {
  llm: section(LlmSettingsRequest),
  stt: section(SpeechSettingsRequest),
  tts: section(SpeechSettingsRequest),
  embeddings: section(LlmSettingsRequest.annotations({
    description:
      "An OpenAI-compatible `/embeddings` endpoint for knowledge-base retrieval (model e.g. text-embedding-3-small)"
  }))
})

const SectionResponse = Schema.Struct({
  provider: Schema.String,
  model: Schema.NullOr(Schema.String),
  base_url: Schema.NullOr(Schema.String),
  api_key: Schema.NullOr(Schema.String).annotations({
    description: "Masked (****abcd); the key itself is never returned"
  }),
  api_key_set: Schema.Boolean,
  voice: Schema.optional(Schema.NullOr(Schema.String)),
  language: Schema.optional(Schema.NullOr(Schema.String))
}).annotations({ identifier: "ModelSettingsSection" })

export const ModelConfigurationsResponse = Schema.Struct({
  llm: Schema.NullOr(SectionResponse),
  stt: Schema.NullOr(SectionResponse),
  tts: Schema.NullOr(SectionResponse),
  embeddings: Schema.NullOr(SectionResponse),
  updated_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "ModelConfigurationsResponse" })

export const ModelCheckRequest = bodySchema("ModelCheck", {
  kind: Schema.Literal("llm", "stt", "tts")
})

export const ModelCheckResponse = Schema.Struct({
  kind: Schema.Literal("llm", "stt", "tts"),
  provider: Schema.String,
  model: Schema.NullOr(Schema.String),
  latency_ms: Schema.Int.annotations({ description: "From the request to the provider's whole answer" }),
  reply: Schema.optional(Schema.String).annotations({ description: "LLM: the model's answer to a short prompt" }),
  phrase: Schema.optional(Schema.String).annotations({ description: "STT and TTS: the test phrase" }),
  transcript: Schema.optional(Schema.String).annotations({ description: "STT: what the provider heard" }),
  audio_wav_base64: Schema.optional(Schema.String).annotations({
    description: "TTS: the phrase as spoken, a mono 16 kHz PCM16 WAV file"
  }),
  audio_bytes: Schema.optional(Schema.Int),
  audio_duration_ms: Schema.optional(Schema.Int)
}).annotations({ identifier: "ModelCheckResponse" })

export const ModelConfigurationsApi = HttpApiGroup.make("modelConfigurations")
  .annotate(
    OpenApi.Description,
    "The organization's LLM, speech-to-text, text-to-speech and embeddings settings. Reading needs `agents:read`, changing `agents:write`."
  )
  .add(
    HttpApiEndpoint.get("get", "/")
      .annotate(OpenApi.Summary, "Get model settings")
      .annotate(OpenApi.Description, "The LLM, STT and TTS settings; keys are only ever shown masked.")
      .addSuccess(ModelConfigurationsResponse)
  )
  .add(
    HttpApiEndpoint.put("put", "/")
      .annotate(OpenApi.Summary, "Change model settings")
      .annotate(
        OpenApi.Description,
        "Sets the sections given and leaves omitted sections as they are. An omitted `api_key` keeps the stored key only while `provider` and `base_url` stay the same. Keys are encrypted at rest."
      )
      .setPayload(ModelConfigurationsRequest)
      .addSuccess(ModelConfigurationsResponse)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("test", "/test")
      .annotate(OpenApi.Summary, "Test a model setting")
      .annotate(
        OpenApi.Description,
        "Makes one real request with the saved LLM, STT or TTS settings and answers with the result: the LLM's reply, the TTS's audio, or what the STT heard of a phrase spoken by the organization's TTS (the offline voice when there is none). 422 when nothing is configured for that kind; 502 names the provider that failed, never how (the server log has the details). Needs an admin, as changing the settings does."
      )
      .setPayload(ModelCheckRequest)
      .addSuccess(ModelCheckResponse)
      .addError(HttpValidationFailed)
      .addError(HttpUpstreamFailed)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/organizations/model-configurations")
