import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { WebSocketServer } from "ws"
import { twilioAdapter } from "../layers/telephony/carriers/twilio.ts"
import { SpeechToTextLive } from "../layers/voice/speech/speechToText.ts"
import type { SpeechConnection } from "../services/ModelSettings.ts"
import { OutboundBlocked, OutboundHttp } from "../services/OutboundHttp.ts"
import { SpeechToText } from "../services/SpeechToText.ts"
import type { CarrierAccount } from "../services/Telephony.ts"
import { outboundAllowing } from "./support/outbound.ts"

/** An "internal service" on loopback: it counts whatever reaches it, over HTTP or WebSocket. */
let internal: http.Server
let reached = 0
let port = 0

beforeAll(async () => {
  internal = http.createServer((request, response) => {
    reached++
    request.resume()
    response.end("{}")
  })
  new WebSocketServer({ server: internal }).on("connection", () => reached++)
  await new Promise<void>((resolve) => internal.listen(0, "127.0.0.1", resolve))
  port = (internal.address() as AddressInfo).port
})
afterAll(() => internal.close())

// Local models allowed, local carriers not: the default of a self-hosted service.
const SelfHosted = outboundAllowing("models:loopback,models:private")
const Closed = outboundAllowing("none")

const account = (apiBaseUrl: string): CarrierAccount => ({
  configurationId: 1,
  provider: "twilio",
  apiBaseUrl,
  credentials: { account_sid: "AC1", auth_token: "token-123456789" },
  machineDetection: false
})

describe("the outbound client", () => {
  it.live("refuses a carrier request to a loopback name or address the policy keeps for models, before connecting", () =>
    Effect.gen(function*() {
      reached = 0
      for (
        const base of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::ffff:127.0.0.1]:${port}`]
      ) {
        const failure = yield* twilioAdapter.callStatus(account(base), { providerCallId: "CA1", liveCallId: null })
          .pipe(Effect.flip)
        expect(failure.message, base).toMatch(/TALKGRAPH_OUTBOUND_ALLOW does not allow for carrier endpoints/)
      }
      const outbound = yield* OutboundHttp
      const modelRequest = yield* Effect.promise(() =>
        outbound.send("model", { url: new URL(`http://localhost:${port}/`), method: "GET", headers: {} })
      )
      modelRequest.resume()
      expect(modelRequest.statusCode).toBe(200)
      expect(reached).toBe(1)
    }).pipe(Effect.provide(SelfHosted)))

  it.live("refuses a link-local address whatever the policy allows", () =>
    Effect.gen(function*() {
      const outbound = yield* OutboundHttp
      const failure = yield* Effect.flip(Effect.tryPromise(() =>
        outbound.send("model", { url: new URL("http://169.254.169.254/latest/meta-data/"), method: "GET", headers: {} })
      ))
      expect(failure.cause).toBeInstanceOf(OutboundBlocked)
    }).pipe(Effect.provide(outboundAllowing("loopback,private,0.0.0.0/0"))))

  it.live("opens a transcription socket only where the policy allows", () =>
    Effect.gen(function*() {
      reached = 0
      const deepgram: SpeechConnection = {
        provider: "deepgram",
        model: null,
        apiKey: "dg-key-123456",
        baseUrl: `http://localhost:${port}`,
        voice: null,
        language: null
      }
      const failure = yield* Effect.scoped(
        Effect.flatMap(SpeechToText, (stt) => stt.open(deepgram, { sampleRate: 8000 }))
      ).pipe(Effect.flip)
      expect(failure).toMatchObject({ _tag: "SpeechFailed", provider: "deepgram", reason: "unreachable" })
      const literal = yield* Effect.scoped(Effect.flatMap(SpeechToText, (stt) =>
        stt.open({ ...deepgram, baseUrl: `http://127.0.0.1:${port}` }, { sampleRate: 8000 }))).pipe(Effect.flip)
      expect(literal).toMatchObject({ _tag: "SpeechFailed", reason: "unreachable" })
      expect(reached).toBe(0)
    }).pipe(Effect.provide(SpeechToTextLive.pipe(Layer.provide(Closed)))))

  it.live("does not follow a carrier's redirect", () =>
    Effect.gen(function*() {
      reached = 0
      const redirector = http.createServer((request, response) => {
        request.resume()
        response.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` })
        response.end()
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => redirector.listen(0, "127.0.0.2", resolve)))
      const status = yield* twilioAdapter.callStatus(
        account(`http://127.0.0.2:${(redirector.address() as AddressInfo).port}`),
        { providerCallId: "CA1", liveCallId: null }
      ).pipe(
        Effect.flip,
        Effect.ensuring(Effect.sync(() => redirector.close()))
      )
      expect(status).toMatchObject({ _tag: "CarrierUnavailable" })
      expect(reached).toBe(0)
    }).pipe(Effect.provide(outboundAllowing("127.0.0.2/32"))))
})
