import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"
import { afterEach, describe, expect, it } from "vitest"
import { WebSocketServer } from "ws"
import {
  type InboundMedia,
  type MediaProtocol,
  mediaProtocolFor,
  type MediaProvider
} from "../src/telephony/media/mod.ts"
import { isValidTwilioSignature } from "../src/telephony/twilioSignature.ts"
import { calleeWav, responseLatencies } from "./support/calleeRecording.ts"
import { CalleeRefused, connectCallee } from "./support/fakeCallee.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"

/**
 * The loopback callee against a small probe server that plays the agent's side with the product's
 * media codecs: pacing, play-out, marks, clears, barge-in and every provider's framing.
 */

interface ProbeConnection {
  readonly protocol: MediaProtocol
  readonly request: http.IncomingMessage
  readonly events: Array<{ readonly atMs: number; readonly event: InboundMedia }>
  readonly send: (messages: ReadonlyArray<string | Uint8Array>) => void
  readonly close: () => void
}

type ProbeHandler = (connection: ProbeConnection, event: InboundMedia) => void

const servers: Array<WebSocketServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.clients.forEach((client) => client.terminate())
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})

const startProbe = async (
  provider: MediaProvider,
  onEvent: ProbeHandler,
  options: { readonly refuse?: (request: http.IncomingMessage) => number | null } = {}
) => {
  const connections: Array<ProbeConnection> = []
  const server = new WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    perMessageDeflate: false,
    verifyClient: (info, answer) => {
      const status = options.refuse?.(info.req) ?? null
      return status === null ? answer(true) : answer(false, status, "refused")
    }
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.once("listening", () => resolve()))
  server.on("connection", (socket, request) => {
    const started = performance.now()
    const connection: ProbeConnection = {
      protocol: mediaProtocolFor(provider),
      request,
      events: [],
      send: (messages) => messages.forEach((message) => socket.send(message)),
      close: () => socket.close(1000)
    }
    connections.push(connection)
    socket.on("message", (data, isBinary) => {
      const bytes = data as Buffer
      for (const event of connection.protocol.receive(isBinary ? new Uint8Array(bytes) : bytes.toString("utf8"))) {
        connection.events.push({ atMs: performance.now() - started, event })
        onEvent(connection, event)
      }
    })
  })
  const { port } = server.address() as AddressInfo
  return { url: `ws://127.0.0.1:${port}/media/1?token=abc`, connections }
}

const tone = (ms: number, sampleRate: number, amplitude = 8000) =>
  Int16Array.from(
    { length: Math.round((ms / 1000) * sampleRate) },
    (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / sampleRate))
  )
/** A synthetic voice: every line is a tone of 40 ms per character, so no speech engine is needed. */
const toneVoice = (text: string, sampleRate: number) => Promise.resolve(tone(text.length * 40, sampleRate))

const rms = (samples: Int16Array) =>
  Math.sqrt(samples.reduce((sum, sample) => sum + sample * sample, 0) / Math.max(1, samples.length))
const audioEvents = (connection: ProbeConnection) =>
  connection.events.flatMap(({ atMs, event }) => (event._tag === "Audio" ? [{ atMs, pcm: event.pcm }] : []))

describe("fake callee", () => {
  it("paces its frames at real time against an absolute clock: 50 frames of 20 ms in about a second", async () => {
    const probe = await startProbe("twilio", () => {})
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      script: [{ silence: 1000 }, { hangUp: true }]
    })
    const report = await call.done
    const connection = probe.connections[0]!
    const frames = audioEvents(connection)
    expect(frames).toHaveLength(50)
    expect(frames.every(({ pcm }) => pcm.length === 160 && pcm.every((sample) => sample === 0))).toBe(true)
    const span = frames[49]!.atMs - frames[0]!.atMs
    expect(span).toBeGreaterThan(980 - 60)
    expect(span).toBeLessThan(980 + 60)
    // No drift: every frame leaves close to its own deadline, not 20 ms after the previous one.
    frames.forEach(({ atMs }, k) => expect(Math.abs(atMs - frames[0]!.atMs - k * 20)).toBeLessThan(100))
    expect(connection.events.at(-1)!.event).toEqual({ _tag: "Stopped" })
    expect(report.endedBy).toBe("callee")
    expect(report.callee.length).toBe(50 * 160)
  })

  it("answers a mark only once the audio queued before it has played", async () => {
    const probe = await startProbe("twilio", (connection, event) => {
      if (event._tag !== "Started") return
      connection.send([...connection.protocol.audio(tone(500, 8000)), ...connection.protocol.mark("after-tone")])
      connection.send(connection.protocol.mark("right-behind"))
    })
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      script: [{ silence: 900 }, { hangUp: true }]
    })
    const report = await call.done
    const [afterTone, rightBehind] = report.marks
    expect(afterTone!.name).toBe("after-tone")
    // Play-out starts on the first frame boundary after the audio arrived, and the mark comes back
    // once the frame holding the tone's last sample has finished playing.
    const toneArrived = report.agentMedia[0]!.atMs
    expect(afterTone!.answeredAtMs! - toneArrived).toBeGreaterThanOrEqual(500)
    expect(afterTone!.answeredAtMs! - toneArrived).toBeLessThan(500 + 20 + 60)
    expect(rightBehind!.answeredAtMs).toBe(afterTone!.answeredAtMs)
    expect(report.marks.every((mark) => !mark.cleared)).toBe(true)
    const played = probe.connections[0]!.events.filter(({ event }) => event._tag === "Played")
    expect(played.map(({ event }) => event)).toEqual([{ _tag: "Played", name: "after-tone" }, {
      _tag: "Played",
      name: "right-behind"
    }])
    // The tone was heard for its 500 ms, then silence.
    expect(report.agentBursts).toHaveLength(1)
    expect(report.agentBursts[0]!.endMs - report.agentBursts[0]!.startMs).toBe(500)
  })

  it("answers a mark at once when nothing is queued", async () => {
    const probe = await startProbe("twilio", (connection, event) => {
      if (event._tag === "Started") connection.send(connection.protocol.mark("idle"))
    })
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      script: [{ silence: 200 }, { hangUp: true }]
    })
    const [mark] = (await call.done).marks
    expect(mark!.answeredAtMs! - mark!.receivedAtMs).toBeLessThan(5)
  })

  it("on clear drops the queued audio and answers every pending mark at once", async () => {
    const probe = await startProbe("twilio", (connection, event) => {
      if (event._tag !== "Started") return
      const { protocol } = connection
      connection.send([
        ...protocol.audio(tone(2000, 8000)),
        ...protocol.mark("a"),
        ...protocol.audio(tone(1000, 8000)),
        ...protocol.mark("b")
      ])
      setTimeout(() => connection.send(protocol.clear()), 300)
    })
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      script: [{ silence: 800 }, { hangUp: true }]
    })
    const report = await call.done
    const [clear] = report.clears
    expect(clear!.droppedMs).toBeGreaterThan(2700 - 100)
    expect(clear!.droppedMs).toBeLessThan(2700 + 60)
    expect(report.marks.map(({ name, cleared }) => ({ name, cleared }))).toEqual([{ name: "a", cleared: true }, {
      name: "b",
      cleared: true
    }])
    for (const mark of report.marks) expect(mark.answeredAtMs! - clear!.atMs).toBeLessThan(5)
    // Nothing of the dropped audio is heard after the clear.
    expect(report.agentBursts).toHaveLength(1)
    expect(report.agentBursts[0]!.endMs).toBeLessThanOrEqual(clear!.atMs + 20)
    expect(rms(report.agent.subarray(Math.ceil((clear!.atMs + 20) / 20) * 160))).toBe(0)
    const played = probe.connections[0]!.events.filter(({ event }) => event._tag === "Played").map(({ atMs }) => atMs)
    expect(played).toHaveLength(2)
  })

  it("can drop pending marks on a clear instead, for carriers that do not answer them", async () => {
    const probe = await startProbe("vonage", (connection, event) => {
      if (event._tag !== "Started") return
      connection.send([...connection.protocol.audio(tone(1000, 16000)), ...connection.protocol.mark("never")])
      setTimeout(() => connection.send(connection.protocol.clear()), 200)
    })
    const call = await connectCallee({
      url: probe.url,
      provider: "vonage",
      script: [{ silence: 600 }, { hangUp: true }],
      marksOnClear: "drop"
    })
    const report = await call.done
    expect(report.marks).toEqual([expect.objectContaining({ name: "never", answeredAtMs: null, cleared: true })])
    expect(probe.connections[0]!.events.some(({ event }) => event._tag === "Played")).toBe(false)
  })

  it("barges in once the agent has been audible long enough, and times the clear that answers it", async () => {
    const cleared = new WeakSet<ProbeConnection>()
    const probe = await startProbe("twilio", (connection, event) => {
      if (event._tag === "Started") connection.send(connection.protocol.audio(tone(3000, 8000)))
      // The probe's "VAD": the first loud caller frame clears the agent.
      if (event._tag === "Audio" && rms(event.pcm) > 1000 && !cleared.has(connection)) {
        cleared.add(connection)
        connection.send(connection.protocol.clear())
      }
    })
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      speak: toneVoice,
      script: [{ bargeIn: { afterAgentMs: 800, say: "Stop, wait" } }, { silence: 200 }, { hangUp: true }]
    })
    const report = await call.done
    const [bargeIn] = report.bargeIns
    expect(bargeIn!.speechStartMs - report.agentBursts[0]!.startMs).toBeGreaterThanOrEqual(800)
    expect(bargeIn!.speechStartMs - report.agentBursts[0]!.startMs).toBeLessThan(800 + 40)
    expect(bargeIn!.clearAtMs! - bargeIn!.speechStartMs).toBeLessThan(150)
    expect(report.clears[0]!.sinceBargeInMs).toBe(bargeIn!.clearAtMs! - bargeIn!.speechStartMs)
    expect(bargeIn!.agentStoppedAtMs! - bargeIn!.speechStartMs).toBeLessThanOrEqual(
      bargeIn!.clearAtMs! - bargeIn!.speechStartMs + 20
    )
    expect(report.utterances).toEqual([{
      text: "Stop, wait",
      startMs: bargeIn!.speechStartMs,
      endMs: bargeIn!.speechStartMs + 400
    }])
  })

  it("waits for the agent to answer and fall quiet before it goes on", async () => {
    // An echo agent: once the caller has been quiet for 200 ms, it plays back what the caller said.
    const echoed = new WeakSet<ProbeConnection>()
    const probe = await startProbe("twilio", (connection, event) => {
      if (event._tag !== "Audio" || echoed.has(connection)) return
      const frames = audioEvents(connection).map(({ pcm }) => pcm)
      const loud = frames.map((pcm) => rms(pcm) > 1000)
      const lastLoud = loud.lastIndexOf(true)
      if (lastLoud >= 0 && frames.length - 1 - lastLoud === 10) {
        echoed.add(connection)
        frames.slice(loud.indexOf(true), lastLoud + 1).forEach((pcm) => connection.send(connection.protocol.audio(pcm)))
      }
    })
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      speak: toneVoice,
      script: [{ say: "Hello?" }, { waitForAgent: { quietMs: 500 } }, { hangUp: true }]
    })
    const report = await call.done
    const [hello] = report.utterances
    expect(hello!.endMs! - hello!.startMs).toBe(240)
    const [echo] = report.agentBursts
    expect(echo!.startMs - hello!.endMs!).toBeGreaterThanOrEqual(200)
    expect(echo!.startMs - hello!.endMs!).toBeLessThan(360)
    expect(echo!.endMs - echo!.startMs).toBe(240)
    expect(report.durationMs - echo!.endMs).toBeGreaterThanOrEqual(500)
    expect(report.durationMs - echo!.endMs).toBeLessThan(600)
    expect(report.timeouts).toEqual([])
    expect(responseLatencies(report)).toEqual([{ text: "Hello?", latencyMs: echo!.startMs - hello!.endMs! }])
    // The recording: callee left, agent right; the echo on the right is the caller's line played back.
    const wav = calleeWav(report)
    const view = new DataView(wav.buffer)
    expect(view.getUint16(22, true)).toBe(2)
    expect(view.getUint32(24, true)).toBe(8000)
    const right = (sample: number) => view.getInt16(46 + sample * 4, true)
    const left = (sample: number) => view.getInt16(44 + sample * 4, true)
    const helloAt = (hello!.startMs / 1000) * 8000
    const echoAt = (echo!.startMs / 1000) * 8000
    for (let i = 0; i < 1920; i += 97) {
      expect(Math.abs(right(echoAt + i) - left(helloAt + i))).toBeLessThanOrEqual(Math.abs(left(helloAt + i)) / 8 + 16)
    }
  })

  it("gives up waiting for a silent agent after the step's timeout", async () => {
    const probe = await startProbe("twilio", () => {})
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      script: [{ waitForAgent: { quietMs: 100, timeoutMs: 300 } }, { hangUp: true }]
    })
    const report = await call.done
    expect(report.timeouts).toEqual([{ step: 0, atMs: 300 }])
  })

  it("records that the server hung up", async () => {
    const probe = await startProbe("twilio", (connection, event) => {
      if (event._tag === "Started") setTimeout(() => connection.close(), 200)
    })
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      script: [{ silence: 5000 }, { hangUp: true }]
    })
    const report = await call.done
    expect(report.serverClosed).toBe(true)
    expect(report.endedBy).toBe("server")
    expect(report.closeCode).toBe(1000)
    expect(report.durationMs).toBeLessThan(1000)
  })

  it("signs the Twilio upgrade over the stream URL, and reports a refused upgrade", async () => {
    const authToken = "twilio-test-token"
    const probe = await startProbe("twilio", () => {}, {
      refuse: (request) => {
        const url = `wss://agents.example.com${request.url}`
        return isValidTwilioSignature(authToken, url, {}, request.headers["x-twilio-signature"] as string | undefined)
          ? null
          : 403
      }
    })
    const signedUrl = probe.url.replace(/^ws:\/\/127\.0\.0\.1:\d+/, "wss://agents.example.com")
    const call = await connectCallee({
      url: probe.url,
      signedUrl,
      provider: "twilio",
      twilioAuthToken: authToken,
      script: [{ hangUp: true }]
    })
    expect((await call.done).endedBy).toBe("callee")
    const refused = await connectCallee({
      url: probe.url,
      signedUrl,
      provider: "twilio",
      twilioAuthToken: "wrong",
      script: []
    }).then(
      () => null,
      (error: unknown) => error
    )
    expect(refused).toBeInstanceOf(CalleeRefused)
    expect((refused as CalleeRefused).status).toBe(403)
  })

  it("reports what the agent got wrong about the protocol", async () => {
    const probe = await startProbe("twilio", (connection, event) => {
      if (event._tag !== "Started") return
      connection.send([
        JSON.stringify({ event: "media", streamSid: "MZwrong", media: { payload: "/w==" } }),
        "garbage",
        Uint8Array.of(1, 2)
      ])
      const wav = Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(40)]).toString("base64")
      const streamSid = (connection.events[0]!.event as { streamId: string }).streamId
      connection.send([JSON.stringify({ event: "media", streamSid, media: { payload: wav } })])
    })
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      script: [{ silence: 100 }, { hangUp: true }]
    })
    const reasons = (await call.done).protocolErrors.map(({ reason }) => reason)
    expect(reasons).toEqual([
      "media for stream MZwrong, not " + (probe.connections[0]!.events[0]!.event as { streamId: string }).streamId,
      "not JSON",
      "binary message on a JSON stream",
      "media payload carries a WAV header"
    ])
  })

  it("sends Telnyx frames out of order when asked, and the product's codec puts them back", async () => {
    const probe = await startProbe("telnyx", () => {})
    const voice = (_text: string, sampleRate: number) =>
      Promise.resolve(
        Int16Array.from({ length: sampleRate }, (_, i) => Math.round(12000 * Math.sin(i / 7) * (1 + (i % 160) / 160)))
      )
    const call = await connectCallee({
      url: probe.url,
      provider: "telnyx",
      speak: voice,
      reorderEvery: 4,
      script: [{ say: "ramp" }, { hangUp: true }]
    })
    const report = await call.done
    const received = audioEvents(probe.connections[0]!).flatMap(({ pcm }) => [...pcm])
    expect(received).toHaveLength(report.callee.length)
    // μ-law keeps about 1/16 of the magnitude: a frame out of place would be off by far more.
    received.forEach((sample, i) =>
      expect(Math.abs(sample - report.callee[i]!)).toBeLessThanOrEqual(Math.abs(report.callee[i]!) / 16 + 8)
    )
  })

  it("opens no Plivo stream whose extraHeaders Plivo would refuse (only [A-Za-z0-9], at most 512 bytes)", async () => {
    const probe = await startProbe("plivo", () => {})
    const open = (parameters: Record<string, string>) =>
      connectCallee({ url: probe.url, provider: "plivo", parameters, speak: toneVoice, script: [{ hangUp: true }] })
    await expect(open({ token: "1900000000.abc-DEF_ghi" })).rejects.toThrow(/only \[A-Za-z0-9\]/)
    await expect(open({ run: "4".repeat(600) })).rejects.toThrow(/at most 512 bytes/)
    expect(probe.connections).toEqual([])
  })

  describe.each(["twilio", "vonage", "telnyx", "plivo", "browser"] as const)("%s framing", (provider) => {
    it("starts the stream with the call's identity and parameters, and plays the agent's reply", async () => {
      const probe = await startProbe(provider, (connection, event) => {
        if (event._tag !== "Audio") return
        const loud = audioEvents(connection).filter(({ pcm }) => rms(pcm) > 1000).length
        if (loud === 5) {
          connection.send([
            ...connection.protocol.audio(tone(300, connection.protocol.sampleRate)),
            ...connection.protocol.mark("reply")
          ])
        }
      })
      const call = await connectCallee({
        url: probe.url,
        provider,
        speak: toneVoice,
        callId: "call-1",
        streamId: "stream-1",
        parameters: { run: "42" },
        script: [{ say: "Hello there" }, { waitForAgent: { quietMs: 200 } }, { dtmf: "5" }, { silence: 40 }, {
          hangUp: true
        }]
      })
      const report = await call.done
      const events = probe.connections[0]!.events.map(({ event }) => event)
      const started = events.find((event) => event._tag === "Started")
      expect(started).toMatchObject({ parameters: { run: "42" } })
      if (provider === "twilio" || provider === "telnyx" || provider === "plivo") {
        expect(started).toEqual({ _tag: "Started", streamId: "stream-1", callId: "call-1", parameters: { run: "42" } })
      }
      expect(
        events.filter((event) => event._tag === "Audio").every((event) => event.pcm.length === report.sampleRate / 50)
      ).toBe(true)
      expect(events).toContainEqual({ _tag: "Dtmf", digit: "5" })
      expect(events).toContainEqual({ _tag: "Played", name: "reply" })
      expect(report.agentBursts).toHaveLength(1)
      expect(report.agentBursts[0]!.endMs - report.agentBursts[0]!.startMs).toBe(300)
      expect(report.protocolErrors).toEqual([])
      expect(report.timeouts).toEqual([])
      if (provider === "twilio" || provider === "telnyx" || provider === "browser") {
        expect(events.at(-1)).toEqual({ _tag: "Stopped" })
      }
    })
  })

  it("speaks with eSpeak NG by default", async () => {
    const probe = await startProbe("twilio", () => {})
    const call = await connectCallee({
      url: probe.url,
      provider: "twilio",
      script: [{ say: "Hello?" }, { hangUp: true }]
    })
    const report = await call.done
    const [hello] = report.utterances
    expect(hello!.endMs! - hello!.startMs).toBeGreaterThan(200)
    expect(rms(report.callee)).toBeGreaterThan(300)
    expect(audioEvents(probe.connections[0]!).length).toBe(report.callee.length / 160)
  })
})

describe("loopback Twilio with a streamed callee", () => {
  interface Product {
    readonly url: string
    readonly callbacks: Array<Record<string, string>>
    readonly streams: Array<ProbeConnection & { readonly signature: boolean }>
  }
  const carriers: Array<FakeTwilio> = []
  const products: Array<{ readonly close: () => Promise<void> }> = []
  afterEach(async () => {
    for (const carrier of carriers.splice(0)) await carrier.close()
    for (const product of products.splice(0)) await product.close()
  })

  /** The product's side: answer URL, status callback and media socket, with a handler for media events. */
  const startProduct = async (authToken: string, onEvent: ProbeHandler): Promise<Product> => {
    const callbacks: Array<Record<string, string>> = []
    const streams: Array<ProbeConnection & { signature: boolean }> = []
    let base = ""
    const server = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url === "/answer") {
          response.writeHead(200, { "content-type": "text/xml" })
          response.end(
            `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${
              base.replace(/^http/, "ws")
            }/media?token=a&amp;b=c">` +
              `<Parameter name="run" value="42"/><Parameter name="note" value="a &lt;b&gt;"/></Stream></Connect></Response>`
          )
          return
        }
        callbacks.push(Object.fromEntries(new URLSearchParams(body)))
        response.writeHead(204).end()
      })
    })
    const sockets = new WebSocketServer({ server, perMessageDeflate: false })
    sockets.on("connection", (socket, request) => {
      const started = performance.now()
      const url = `${base.replace(/^http/, "ws")}${request.url}`
      const connection = {
        protocol: mediaProtocolFor("twilio"),
        request,
        events: [] as Array<{ atMs: number; event: InboundMedia }>,
        send: (messages: ReadonlyArray<string | Uint8Array>) => messages.forEach((message) => socket.send(message)),
        close: () => socket.close(1000),
        signature: isValidTwilioSignature(
          authToken,
          url,
          {},
          request.headers["x-twilio-signature"] as string | undefined
        )
      }
      streams.push(connection)
      socket.on("message", (data) => {
        for (const event of connection.protocol.receive((data as Buffer).toString("utf8"))) {
          connection.events.push({ atMs: performance.now() - started, event })
          onEvent(connection, event)
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const product = {
      url: base,
      callbacks,
      streams,
      close: async () => {
        sockets.clients.forEach((client) => client.terminate())
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    }
    products.push(product)
    return product
  }

  const placeCall = async (carrier: FakeTwilio, product: Product, to: string, extra: Record<string, string> = {}) => {
    const response = await fetch(`${carrier.url}/2010-04-01/Accounts/${carrier.accountSid}/Calls.json`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${carrier.accountSid}:${carrier.authToken}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams({
        To: to,
        From: "+14155550100",
        Url: `${product.url}/answer`,
        StatusCallback: `${product.url}/status`,
        ...extra
      })
    })
    expect(response.status).toBe(201)
    const { sid } = (await response.json()) as { sid: string }
    return carrier.calls().find((call) => call.sid === sid)!
  }

  const until = async (condition: () => boolean, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      if (Date.now() > deadline) throw new Error("timed out")
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  it("streams a call whose answer connects a stream, with its parameters, until the callee hangs up", async () => {
    const carrier = await startFakeTwilio()
    carriers.push(carrier)
    const product = await startProduct(carrier.authToken, (connection, event) => {
      if (event._tag === "Started") connection.send(connection.protocol.audio(tone(400, 8000)))
    })
    carrier.calleeScript("+14155550001", {
      script: [{ say: "Hi" }, { waitForAgent: { quietMs: 200 } }, { hangUp: true }],
      speak: toneVoice
    })
    const call = await placeCall(carrier, product, "+14155550001")
    const report = (await call.calleeDone)!
    expect(report.endedBy).toBe("callee")
    expect(report.agentBursts.map(({ startMs, endMs }) => endMs - startMs)).toEqual([400])
    const [stream] = product.streams
    // Twilio drops the query string of <Stream url>: only <Parameter> values reach the server.
    expect(stream!.request.url).toBe("/media")
    expect(stream!.signature).toBe(true)
    expect(stream!.events[0]!.event).toEqual({
      _tag: "Started",
      streamId: expect.stringMatching(/^MZ[0-9a-f]{32}$/),
      callId: call.sid,
      parameters: { run: "42", note: "a <b>" }
    })
    expect(stream!.events.at(-1)!.event).toEqual({ _tag: "Stopped" })
    await until(() => product.callbacks.some((callback) => callback.CallStatus === "completed"))
    // No StatusCallbackEvent was asked for: Twilio then posts the end only.
    expect(product.callbacks.map((callback) => callback.CallStatus)).toEqual(["completed"])
    expect(Number(product.callbacks.at(-1)!.CallDuration)).toBeGreaterThanOrEqual(1)
    expect(call.status).toBe("completed")
  })

  it("stops the stream when the call is hung up over REST, and completes when the server closes the stream", async () => {
    const carrier = await startFakeTwilio()
    carriers.push(carrier)
    const product = await startProduct(carrier.authToken, (connection, event) => {
      if (event._tag === "Started" && connection.events.length === 1 && product.streams.length === 2) {
        setTimeout(() => connection.close(), 300)
      }
    })
    carrier.calleeScript("+14155550002", { script: [{ silence: 10_000 }], speak: toneVoice })
    carrier.calleeScript("+14155550003", { script: [{ silence: 10_000 }], speak: toneVoice })
    const hungUp = await placeCall(carrier, product, "+14155550002")
    await until(() => hungUp.media !== null)
    const update = await fetch(`${carrier.url}/2010-04-01/Accounts/${carrier.accountSid}/Calls/${hungUp.sid}.json`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${carrier.accountSid}:${carrier.authToken}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams({ Status: "completed" })
    })
    expect(update.status).toBe(200)
    const byRest = (await hungUp.calleeDone)!
    expect(byRest.endedBy).toBe("carrier")
    expect(product.streams[0]!.events.at(-1)!.event).toEqual({ _tag: "Stopped" })
    expect(hungUp.hungUpByApi).toBe(true)

    const closed = await placeCall(carrier, product, "+14155550003")
    const byServer = (await closed.calleeDone)!
    expect(byServer.serverClosed).toBe(true)
    await until(() => product.callbacks.filter((callback) => callback.CallStatus === "completed").length === 2)
    expect(closed.status).toBe("completed")
  })

  it("reports a machine's answer with the completed callback when detection is on", async () => {
    const carrier = await startFakeTwilio({
      script: () => ({ outcome: "voicemail" }),
      callee: () => [{ say: "Leave a message" }, { hangUp: true }]
    })
    carriers.push(carrier)
    const product = await startProduct(carrier.authToken, () => {})
    const call = await placeCall(carrier, product, "+14155550004", { MachineDetection: "Enable" })
    expect(await call.calleeDone).not.toBeNull()
    await until(() => product.callbacks.some((callback) => callback.CallStatus === "completed"))
    expect(product.callbacks.at(-1)).toMatchObject({ CallStatus: "completed", AnsweredBy: "machine_end_beep" })
  })

  it("posts the progress events a call asks for with StatusCallbackEvent, in order", async () => {
    const carrier = await startFakeTwilio({ script: () => ({ outcome: "completed", ringMs: 30, talkMs: 50 }) })
    carriers.push(carrier)
    const product = await startProduct(carrier.authToken, () => {})
    const response = await fetch(`${carrier.url}/2010-04-01/Accounts/${carrier.accountSid}/Calls.json`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${carrier.accountSid}:${carrier.authToken}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams([
        ["To", "+14155550006"] as [string, string],
        ["From", "+14155550100"],
        ["Url", `${product.url}/answer`],
        ["StatusCallback", `${product.url}/status`],
        ...["initiated", "ringing", "answered", "completed"].map((
          event
        ): [string, string] => ["StatusCallbackEvent", event])
      ])
    })
    expect(response.status).toBe(201)
    await until(() => product.callbacks.some((callback) => callback.CallStatus === "completed"))
    expect(product.callbacks.map((callback) => callback.CallStatus)).toEqual([
      "initiated",
      "ringing",
      "in-progress",
      "completed"
    ])
  })

  it("keeps a call without a callee script to its scripted talk time", async () => {
    const carrier = await startFakeTwilio({ script: () => ({ outcome: "completed", talkMs: 50 }) })
    carriers.push(carrier)
    const product = await startProduct(carrier.authToken, () => {})
    const call = await placeCall(carrier, product, "+14155550005")
    expect(await call.calleeDone).toBeNull()
    expect(product.streams).toEqual([])
    expect(call.answerMarkup).toContain("<Connect><Stream")
  })
})
