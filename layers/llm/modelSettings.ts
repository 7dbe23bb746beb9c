import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Layer, Option, Redacted } from "effect"
import type { LlmConnection } from "../../services/LlmGenerator.ts"
import {
  type ModelSectionInput,
  type ModelSectionView,
  ModelSettings,
  type ModelSettingsInput,
  type ModelSettingsView
} from "../../services/ModelSettings.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { ValidationFailed } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { keyHint, maskedKey } from "../../src/domain/secretMask.ts"
import { carryCredential, comparableUrl } from "../../src/domain/storedCredentials.ts"
import { speechSettingProblems } from "../../src/voice/speechProviders.ts"

/** A section as stored: the key sealed by SecretBox plus its last characters for the mask. */
interface StoredSection {
  readonly provider: string
  readonly model: string | null
  readonly base_url: string | null
  readonly api_key_sealed: string | null
  readonly api_key_hint: string
  readonly voice: string | null
  readonly language: string | null
}

interface SettingsRow {
  readonly llm: StoredSection | null
  readonly stt: StoredSection | null
  readonly tts: StoredSection | null
  readonly embeddings: StoredSection | null
  readonly updated_at: Date
}

type Kind = "llm" | "stt" | "tts" | "embeddings"

const KINDS: ReadonlyArray<Kind> = ["llm", "stt", "tts", "embeddings"]

/**
 * How long an organization's decrypted LLM settings are reused (every chat message and call turn
 * needs them): the bound on how late a change made through another process is seen here.
 */
const LLM_REUSE_MS = 1000
const LLM_REUSE_LIMIT = 10_000

const toView = (section: StoredSection | null, kind: Kind): ModelSectionView | null => {
  if (!section) return null
  return {
    provider: section.provider,
    model: section.model,
    base_url: section.base_url,
    api_key: section.api_key_sealed ? maskedKey(section.api_key_hint) : null,
    api_key_set: section.api_key_sealed !== null,
    ...(kind === "llm" || kind === "embeddings" ? {} : { voice: section.voice, language: section.language })
  }
}

const viewOf = (row: SettingsRow | undefined): ModelSettingsView => ({
  llm: toView(row?.llm ?? null, "llm"),
  stt: toView(row?.stt ?? null, "stt"),
  tts: toView(row?.tts ?? null, "tts"),
  embeddings: toView(row?.embeddings ?? null, "embeddings"),
  updated_at: row?.updated_at ?? null
})

export const ModelSettingsLive = Layer.effect(
  ModelSettings,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    const outbound = yield* OutboundHttp
    const recentLlms = new Map<
      number,
      { readonly connection: Option.Option<LlmConnection>; readonly expiresAt: number }
    >()
    // Bumped by every stored change: a read that began before it must not keep what it read.
    let changes = 0

    const rememberLlm = (organizationId: number, connection: Option.Option<LlmConnection>, now: number) => {
      if (recentLlms.size >= LLM_REUSE_LIMIT) recentLlms.clear()
      recentLlms.set(organizationId, { connection, expiresAt: now + LLM_REUSE_MS })
    }

    const forgetLlm = (organizationId: number) =>
      Effect.sync(() => {
        changes++
        recentLlms.delete(organizationId)
      })

    const load = (organizationId: number) =>
      sql<SettingsRow>`
        SELECT llm, stt, tts, embeddings, updated_at FROM organization_model_settings WHERE organization_id = ${organizationId}`
        .pipe(
          Effect.map((rows) => rows[0])
        )

    /** A section's key follows the one rule for stored credentials: never to a changed provider or base_url. */
    const merge = (kind: Kind, input: ModelSectionInput, stored: StoredSection | null) => {
      const baseUrl = input.base_url ?? null
      const carried = carryCredential(
        input.api_key,
        stored?.api_key_sealed === null ? null : stored,
        stored === null ? null : { provider: stored.provider, base_url: comparableUrl(stored.base_url) },
        { provider: input.provider, base_url: comparableUrl(baseUrl) }
      )
      if (carried._tag === "MaskedOnly") {
        return Either.left(
          ValidationFailed.single(
            ["body", kind, "api_key"],
            "This is a masked key; send the real key (a stored key is only kept while provider and base_url stay the same), or omit api_key"
          )
        )
      }
      const section: StoredSection = {
        provider: input.provider,
        model: input.model ?? null,
        base_url: baseUrl,
        api_key_sealed: carried._tag === "Replaced"
          ? secrets.encrypt(carried.value)
          : carried._tag === "Kept"
          ? carried.stored.api_key_sealed
          : null,
        api_key_hint: carried._tag === "Replaced"
          ? keyHint(carried.value)
          : carried._tag === "Kept"
          ? carried.stored.api_key_hint
          : "",
        voice: input.voice ?? null,
        language: input.language ?? null
      }
      if ((kind === "llm" || kind === "embeddings") && section.base_url === null && section.api_key_sealed === null) {
        return Either.left(
          ValidationFailed.single(
            ["body", kind, "api_key"],
            "api_key is required for the OpenAI API (a stored key is only kept while provider and base_url stay the same)"
          )
        )
      }
      if (kind === "stt" || kind === "tts") {
        const problems = speechSettingProblems(kind, {
          provider: section.provider,
          base_url: section.base_url,
          hasKey: section.api_key_sealed !== null
        })
        if (problems.length > 0) {
          return Either.left(
            new ValidationFailed({
              message: problems.map((problem) => problem.message).join("; "),
              problems: problems.map((problem) => ({
                loc: ["body", kind, problem.field],
                msg: problem.message,
                type: "value_error"
              }))
            })
          )
        }
      }
      return Either.right(section)
    }

    const get = Effect.fn("ModelSettings.get")(function*(principal: Principal) {
      return viewOf(yield* load(principal.organizationId))
    }, Effect.orDie)

    /** Base URLs the outbound policy refuses, found before the transaction: a name may take a moment to resolve. */
    const addressProblems = (input: ModelSettingsInput) =>
      Effect.forEach(KINDS, (kind) => {
        const baseUrl = input[kind]?.base_url
        if (baseUrl === undefined || baseUrl === null) return Effect.succeed([])
        return Effect.map(
          outbound.refusal("model", baseUrl),
          Option.match({
            onNone: () => [],
            onSome: (
              reason
            ) => [{ loc: ["body", kind, "base_url"], msg: `base_url refused: ${reason}`, type: "value_error" }]
          })
        )
      }).pipe(Effect.map((problems) => problems.flat()))

    const put = Effect.fn("ModelSettings.put")(function*(principal: Principal, input: ModelSettingsInput) {
      const refusedAddresses = yield* addressProblems(input)
      return yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO organization_model_settings (organization_id) VALUES (${principal.organizationId})
          ON CONFLICT (organization_id) DO NOTHING`
        const [current] = yield* sql<SettingsRow>`
          SELECT llm, stt, tts, embeddings, updated_at FROM organization_model_settings
          WHERE organization_id = ${principal.organizationId} FOR UPDATE`
        const next: Record<Kind, StoredSection | null> = {
          llm: current!.llm,
          stt: current!.stt,
          tts: current!.tts,
          embeddings: current!.embeddings
        }
        const problems: Array<ValidationFailed["problems"][number]> = []
        for (const kind of KINDS) {
          const section = input[kind]
          if (section === undefined) continue
          problems.push(...refusedAddresses.filter((problem) => problem.loc[1] === kind))
          const merged = merge(kind, section, current![kind])
          if (Either.isLeft(merged)) problems.push(...merged.left.problems)
          else next[kind] = merged.right
        }
        if (problems.length > 0) {
          return yield* new ValidationFailed({ message: problems.map((problem) => problem.msg).join("; "), problems })
        }
        const [row] = yield* sql<SettingsRow>`
          UPDATE organization_model_settings
          SET llm = ${next.llm ? JSON.stringify(next.llm) : null}::jsonb,
              stt = ${next.stt ? JSON.stringify(next.stt) : null}::jsonb,
              tts = ${next.tts ? JSON.stringify(next.tts) : null}::jsonb,
              embeddings = ${next.embeddings ? JSON.stringify(next.embeddings) : null}::jsonb,
              updated_at = now()
          WHERE organization_id = ${principal.organizationId}
          RETURNING llm, stt, tts, embeddings, updated_at`
        return viewOf(row)
      })).pipe(Effect.tap(() => forgetLlm(principal.organizationId)))
    }, Effect.catchTag("SqlError", Effect.die))

    const unseal = (section: StoredSection) =>
      section.api_key_sealed === null
        ? Effect.succeed(null)
        : secrets.decrypt(section.api_key_sealed).pipe(Effect.orDie)

    const loadLlm = (organizationId: number) =>
      Effect.gen(function*() {
        const section = (yield* load(organizationId))?.llm
        if (!section || section.model === null) return Option.none<LlmConnection>()
        const key = yield* unseal(section)
        return Option.some<LlmConnection>({
          provider: "openai",
          model: section.model,
          apiKey: key === null ? null : Redacted.make(key),
          baseUrl: section.base_url
        })
      })

    /** Reused for LLM_REUSE_MS; a change stored through this process is seen at once. */
    const llmFor = Effect.fn("ModelSettings.llmFor")(function*(organizationId: number) {
      const now = yield* Clock.currentTimeMillis
      const recent = recentLlms.get(organizationId)
      if (recent && recent.expiresAt > now) return recent.connection
      const changesBefore = changes
      const connection = yield* loadLlm(organizationId)
      if (changes === changesBefore) rememberLlm(organizationId, connection, now)
      return connection
    }, Effect.orDie)

    const speechFor = Effect.fn("ModelSettings.speechFor")(function*(organizationId: number, kind: "stt" | "tts") {
      const section = (yield* load(organizationId))?.[kind]
      if (!section) return Option.none()
      return Option.some({
        provider: section.provider,
        model: section.model,
        apiKey: yield* unseal(section),
        baseUrl: section.base_url,
        voice: section.voice,
        language: section.language
      })
    }, Effect.orDie)

    const embeddingsFor = Effect.fn("ModelSettings.embeddingsFor")(function*(organizationId: number) {
      const section = (yield* load(organizationId))?.embeddings
      if (!section || section.model === null) return Option.none()
      return Option.some({ model: section.model, apiKey: yield* unseal(section), baseUrl: section.base_url })
    }, Effect.orDie)

    return ModelSettings.of({ get, put, llmFor, speechFor, embeddingsFor })
  })
)
