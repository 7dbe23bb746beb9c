import { Effect, Layer } from "effect"
import type { SpeechConnection } from "../../../services/ModelSettings.ts"
import { OutboundHttp } from "../../../services/OutboundHttp.ts"
import { SpeechFailed, SpeechToText, type TranscriptionOptions } from "../../../services/SpeechToText.ts"
import { SPEECH_TO_TEXT_PROVIDERS } from "../../../src/voice/speechProviders.ts"
import { openDeepgramSession } from "./deepgramListen.ts"
import { openOpenAiTranscriptionSession } from "./openaiTranscription.ts"

export { SPEECH_TO_TEXT_PROVIDERS }

export const SpeechToTextLive = Layer.effect(
  SpeechToText,
  Effect.map(OutboundHttp, (outbound) =>
    SpeechToText.of({
      open: Effect.fn("SpeechToText.open")(function*(connection: SpeechConnection, options: TranscriptionOptions) {
        yield* Effect.annotateCurrentSpan({
          provider: connection.provider,
          model: connection.model ?? "",
          sampleRate: options.sampleRate
        })
        switch (connection.provider) {
          case "deepgram":
            return yield* openDeepgramSession(outbound, connection, options)
          case "openai":
            return yield* openOpenAiTranscriptionSession(outbound, connection, options)
          default:
            return yield* new SpeechFailed({
              provider: connection.provider,
              reason: "unsupported",
              message: `no speech-to-text provider "${connection.provider}" (use ${
                SPEECH_TO_TEXT_PROVIDERS.join(" or ")
              })`
            })
        }
      })
    }))
)
