import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Timestamp } from "../../../src/domain/wireTypes.ts"
import { baseUrlProblem } from "../../../src/outbound/baseUrls.ts"
import { HttpForbidden, HttpValidationFailed } from "../../errors.ts"
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
  tts: section(SpeechSettingsRequest)
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
  updated_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "ModelConfigurationsResponse" })

export const ModelConfigurationsApi = HttpApiGroup.make("modelConfigurations")
  .annotate(
    OpenApi.Description,
    "The organization's LLM, speech-to-text and text-to-speech settings. Reading needs `agents:read`, changing `agents:write`."
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
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/organizations/model-configurations")
