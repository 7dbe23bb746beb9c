/**
 * Memory while providers send enormous replies: a loopback "carrier", "LLM" and "TTS" each offer
 * a 400 MB answer (the size that once took the process to 1.9 GB of RSS), and the real clients
 * read them through the outbound client. Prints, per client, how much of the reply was read before
 * it was cut off, how long that took, and the peak RSS growth (sampled every 10 ms).
 *
 *   npx tsx --expose-gc bench/providerReplyMemory.ts
 */
import { Effect, Layer, Redacted, Stream } from "effect"
import { LlmChatLive } from "../layers/llm/openaiChat.ts"
import { twilioAdapter } from "../layers/telephony/carriers/twilio.ts"
import { TextToSpeechLive } from "../layers/voice/speech/textToSpeech.ts"
import { LlmChat } from "../services/LlmChat.ts"
import { TextToSpeech } from "../services/TextToSpeech.ts"
import { type HugeReplyOptions, startHugeReply } from "../test/support/hugeReply.ts"
import { LoopbackOutbound } from "../test/support/outbound.ts"

const OFFERED = 400 * 1024 * 1024
const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

const measure = async (
  label: string,
  reply: Omit<HugeReplyOptions, "total">,
  client: (url: string) => Effect.Effect<unknown, unknown>
) => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const standIn = await startHugeReply({ total: OFFERED, ...reply })
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
  const started = performance.now()
  const outcome = await Effect.runPromise(Effect.either(client(standIn.url)))
  const elapsed = performance.now() - started
  await standIn.ended[0]
  clearInterval(sampler)
  await standIn.close()
  const failure = outcome._tag === "Left"
    ? String((outcome.left as { message?: unknown }).message ?? outcome.left)
    : "no failure"
  console.log(
    `${label.padEnd(22)} offered ${MiB(OFFERED)}, sent ${MiB(standIn.sent[0]!)} before the cut, ${
      elapsed.toFixed(0)
    } ms, peak RSS +${MiB(peak - before)} — ${failure}`
  )
}

await measure("carrier JSON (Twilio)", {
  contentType: "application/json",
  prefix: "{\"sid\":\"CA",
  piece: "0123456789abcdef"
}, (url) =>
  twilioAdapter.placeCall(
    {
      configurationId: 1,
      provider: "twilio",
      apiBaseUrl: url,
      credentials: { account_sid: "AC1", auth_token: "t-123456789" },
      machineDetection: false
    },
    {
      to: "+15550000001",
      from: "+15559990000",
      answerUrl: "http://127.0.0.1:1/a",
      statusCallbackUrl: "http://127.0.0.1:1/s",
      timeLimitSeconds: 60
    }
  ).pipe(Effect.provide(LoopbackOutbound)))

const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "word ".repeat(150) } }] })}\n\n`
await measure(
  "LLM chat stream",
  { contentType: "text/event-stream", piece: event },
  (url) =>
    Effect.flatMap(LlmChat, (chat) =>
      chat.reply({
        connection: { provider: "openai", model: "m", apiKey: Redacted.make("sk-bench-123456"), baseUrl: url },
        messages: [{ role: "user", content: "Hi" }],
        tools: []
      }, () => Effect.void)).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound))))
)

await measure(
  "TTS audio (OpenAI)",
  { contentType: "audio/pcm", piece: Buffer.alloc(64 * 1024, 1) },
  (url) =>
    Effect.flatMap(TextToSpeech, (tts) =>
      Stream.runDrain(
        tts.synthesize(
          { provider: "openai", model: null, apiKey: "k-123456789", baseUrl: url, voice: null, language: null },
          "Hello.",
          8000
        )
      )).pipe(Effect.provide(TextToSpeechLive.pipe(Layer.provide(LoopbackOutbound))))
)
