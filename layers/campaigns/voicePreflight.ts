import { Effect, Option } from "effect"
import { AppConfig, InvalidConfiguration } from "../../services/AppConfig.ts"
import { ModelSettings, type SpeechConnection } from "../../services/ModelSettings.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import {
  localStorageSharedConfig,
  type SpeechSetting,
  voicePreflightProblems
} from "../../src/campaigns/voicePreflight.ts"
import { Conflict } from "../../src/domain/errors.ts"

const settingOf = (connection: Option.Option<SpeechConnection>): SpeechSetting | null =>
  Option.match(connection, {
    onNone: () => null,
    onSome: (speech) => ({ provider: speech.provider, base_url: speech.baseUrl, hasKey: speech.apiKey !== null })
  })

/** The check a campaign passes before it dials (start, resume): every call would fail otherwise. */
export const makeVoicePreflight = Effect.gen(function*() {
  const settings = yield* ModelSettings
  const config = yield* AppConfig
  const publicUrl = yield* PublicUrl
  const localStorageShared = yield* localStorageSharedConfig.pipe(
    Effect.mapError((error) => new InvalidConfiguration({ message: `Invalid configuration: ${String(error)}` }))
  )
  const storage = {
    sharedDatabase: Option.isSome(config.databaseUrl),
    localStorage: config.storageUrl.startsWith("file:"),
    localStorageShared
  }

  return (organizationId: number, carrier: { readonly provider: string; readonly apiBaseUrl: string }) =>
    Effect.gen(function*() {
      const [llm, stt, tts] = yield* Effect.all([
        settings.llmFor(organizationId),
        settings.speechFor(organizationId, "stt"),
        settings.speechFor(organizationId, "tts")
      ])
      const problems = voicePreflightProblems({
        llm: Option.isSome(llm),
        stt: settingOf(stt),
        tts: settingOf(tts),
        publicUrl,
        carrier,
        storage
      })
      if (problems.length > 0) {
        return yield* new Conflict({ message: `The campaign cannot place calls: ${problems.join("; ")}` })
      }
    })
})
