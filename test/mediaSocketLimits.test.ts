import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { messageSizeGuard } from "../http/webSocketMessageLimit.ts"
import { newAccount } from "./support/accounts.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { useVoiceModels, voiceDefinition } from "./support/voiceFixtures.ts"

/** A client frame as RFC 6455 §5.2 lays it out: masked, with 7-, 16- or 64-bit payload length. */
const frame = (opcode: number, payload: Uint8Array, final = true) => {
  const length = payload.length
  const extended = length < 126 ? Buffer.alloc(0) : length < 65536 ? Buffer.alloc(2) : Buffer.alloc(8)
  if (length >= 126 && length < 65536) extended.writeUInt16BE(length)
  if (length >= 65536) extended.writeBigUInt64BE(BigInt(length))
  const head = Buffer.from([(final ? 0x80 : 0) | opcode, 0x80 | (length < 126 ? length : length < 65536 ? 126 : 127)])
  const mask = crypto.randomBytes(4)
  return Buffer.concat([head, extended, mask, Buffer.from(payload.map((byte, index) => byte ^ mask[index % 4]!))])
}

const feedWhole = (guard: (chunk: Uint8Array) => boolean, bytes: Buffer) => guard(bytes)
const feedByteByByte = (guard: (chunk: Uint8Array) => boolean, bytes: Buffer) => {
  for (const byte of bytes) if (!guard(Uint8Array.of(byte))) return false
  return true
}

describe("WebSocket message size guard", () => {
  const text = (size: number) => Buffer.alloc(size, "a")
  for (const [label, feed] of [["whole", feedWhole], ["byte by byte", feedByteByByte]] as const) {
    it(`follows frames of every length encoding fed ${label}`, () => {
      const stream = Buffer.concat([
        frame(1, text(10)),
        frame(2, text(300)),
        frame(2, text(70_000)),
        frame(1, text(100_000))
      ])
      expect(feed(messageSizeGuard(100_000), stream)).toBe(true)
      expect(feed(messageSizeGuard(99_999), stream)).toBe(false)
    })

    it(`sums a fragmented message's frames, not the control frames between them, fed ${label}`, () => {
      const fragmented = Buffer.concat([
        frame(1, text(40_000), false),
        frame(9, text(100)), // ping in the middle of the message
        frame(0, text(40_000), false),
        frame(0, text(40_000), true),
        frame(1, text(50_000))
      ])
      expect(feed(messageSizeGuard(120_000), fragmented)).toBe(true)
      expect(feed(messageSizeGuard(119_999), fragmented)).toBe(false)
    })
  }

  it("refuses a message from its header, before its payload arrives", () => {
    const head = frame(2, text(70_000)).subarray(0, 14)
    expect(messageSizeGuard(65_536)(head)).toBe(false)
  })
})

describe("media WebSocket message limit", () => {
  let server: RunningServer
  let api: Client
  let deepgram: FakeDeepgram
  let speech: FakeSpeechApis
  let llm: ScriptedLlm

  beforeAll(async () => {
    ;[deepgram, speech, llm] = await Promise.all([startFakeDeepgram(), startFakeSpeechApis(), startScriptedLlm()])
    server = await startServer({}, { ownDatabase: true })
    api = client(server.url)
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await Promise.all([deepgram?.close(), speech?.close(), llm?.close()])
  })

  it(
    "closes a call's media socket with 1009 on a message over 64 KiB, and keeps it open for ordinary frames",
    async () => {
      const account = await newAccount(api)
      await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
      const workflowId = await createWorkflow(api, server, account, voiceDefinition())
      const started = await api.post(`/api/v1/workflow/${workflowId}/browser-calls`, {}, { token: account.token })
      expect(started.status).toBe(200)
      const socket = new WebSocket(started.body.media_url)
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() }))
      )
      socket.on("error", () => undefined)
      await new Promise((resolve) => socket.once("open", resolve))
      socket.send(JSON.stringify({ event: "start" }))
      for (let index = 0; index < 10; index++) socket.send(new Uint8Array(640))
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(socket.readyState).toBe(WebSocket.OPEN)
      socket.send(new Uint8Array(1024 * 1024))
      expect(await closed).toEqual({ code: 1009, reason: "Messages are limited to 65536 bytes" })
    },
    60_000
  )
})
