import { Either, ParseResult, Schema } from "effect"

/**
 * What an agent sets apart from its organization's model settings
 * (`workflow_configurations.overrides`): the LLM model and temperature, the TTS voice and the
 * STT language (the language the caller is expected to speak). Omitted: the organization's.
 */
export const AgentOverrides = Schema.Struct({
  llm_model: Schema.optionalWith(Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(200)), {
    exact: true
  }),
  llm_temperature: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 2)), { exact: true }),
  tts_voice: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)), { exact: true }),
  stt_language: Schema.optionalWith(Schema.String.pipe(Schema.minLength(2), Schema.maxLength(35)), { exact: true })
})
export type AgentOverrides = typeof AgentOverrides.Type

const decode = Schema.decodeUnknownEither(AgentOverrides, { errors: "all", onExcessProperty: "error" })

/** The agent's overrides; none when it sets none (or sets them wrongly: saving refuses that). */
export const overridesOf = (configurations: Readonly<Record<string, unknown>> | null): AgentOverrides | undefined => {
  const raw = configurations?.["overrides"]
  if (raw === undefined || raw === null) return undefined
  const decoded = decode(raw)
  return Either.isRight(decoded) ? decoded.right : undefined
}

/** Why the overrides cannot be used, each problem under `overrides`; none when they can. */
export const overrideProblems = (
  configurations: Readonly<Record<string, unknown>> | null | undefined
): Array<{ path: Array<string | number>; message: string; type: string }> => {
  const raw = configurations?.["overrides"]
  if (raw === undefined || raw === null) return []
  const decoded = decode(raw)
  if (Either.isRight(decoded)) return []
  return ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) => ({
    path: ["overrides", ...issue.path.map((part) => (typeof part === "number" ? part : String(part)))],
    message: issue._tag === "Unexpected"
      ? "is not an override (llm_model, llm_temperature, tts_voice, stt_language)"
      : issue.message,
    type: "value_error"
  }))
}
