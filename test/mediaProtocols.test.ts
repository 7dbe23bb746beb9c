import { describe, expect, it } from "vitest"
import { type InboundMedia, MEDIA_PROVIDERS, type MediaProtocol, mediaProtocolFor } from "../src/telephony/media/mod.ts"

/**
 * Each provider's media protocol against message shapes copied from its documentation: what
 * arrives becomes the session's events, and what the session sends is framed the provider's way.
 */

const json = (value: unknown) => JSON.stringify(value)
const base64 = (bytes: ArrayLike<number>) => Buffer.from(Uint8Array.from(bytes)).toString("base64")
const bytesOf = (payload: string) => [...Buffer.from(payload, "base64")]
const parsed = (message: string | Uint8Array) => {
  expect(typeof message).toBe("string")
  return JSON.parse(message as string) as Record<string, any>
}
/** Little-endian PCM16 bytes of `samples`. */
const linear16 = (samples: ReadonlyArray<number>) => {
  const bytes = new Uint8Array(samples.length * 2)
  const view = new DataView(bytes.buffer)
  samples.forEach((sample, i) => view.setInt16(i * 2, sample, true))
  return bytes
}
const samplesOf = (message: string | Uint8Array) => {
  expect(message).toBeInstanceOf(Uint8Array)
  const bytes = message as Uint8Array
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return Array.from({ length: bytes.length / 2 }, (_, i) => view.getInt16(i * 2, true))
}
const ramp = (length: number, from = 0) => Int16Array.from({ length }, (_, i) => (from + i) * 16)
const audioOf = (events: ReadonlyArray<InboundMedia>) =>
  events.flatMap((event) => (event._tag === "Audio" ? [...event.pcm] : []))

const GARBAGE: ReadonlyArray<string | Uint8Array> = [
  "",
  "not json",
  "null",
  "[1,2]",
  "42",
  json({}),
  json({ event: 7 }),
  json({ event: "media" }),
  json({ event: "media", media: { payload: 123 } }),
  json({ event: "media", media: null }),
  json({ event: "mark", mark: {} }),
  json({ event: "dtmf", dtmf: { digit: 5 } }),
  json({ event: "websocket:notify" }),
  json({ event: "playedStream" }),
  json({ event: "played" }),
  json({ event: "unknown-event" })
]

describe.each(MEDIA_PROVIDERS)("%s media protocol", (provider) => {
  it("ignores garbage without throwing", () => {
    const protocol = mediaProtocolFor(provider)
    for (const message of GARBAGE) expect(protocol.receive(message)).toEqual([])
    // A start that names no stream cannot be answered (the browser call has no stream id at all).
    if (provider !== "browser") expect(protocol.receive(json({ event: "start", start: "x" }))).toEqual([])
    // Binary noise is audio for the binary protocols and is ignored by the JSON ones.
    const noise = Uint8Array.of(0xde, 0xad, 0xbe)
    const events = protocol.receive(noise)
    expect(events.every((event) => event._tag === "Audio")).toBe(true)
  })

  it("keeps no state between connections", () => {
    const first = mediaProtocolFor(provider)
    const second = mediaProtocolFor(provider)
    expect(first).not.toBe(second)
    expect(first.sampleRate).toBe(provider === "vonage" || provider === "browser" ? 16000 : 8000)
  })
})

describe("Twilio Media Streams", () => {
  const started = () => {
    const protocol = mediaProtocolFor("twilio")
    expect(protocol.receive(json({ event: "connected", protocol: "Call", version: "1.0.0" }))).toEqual([])
    const events = protocol.receive(json({
      event: "start",
      sequenceNumber: "1",
      start: {
        accountSid: "AC00000000000000000000000000000001",
        streamSid: "MZ18ad3ab5a668481ce02b83e7395059f0",
        callSid: "CA00000000000000000000000000000002",
        tracks: ["inbound"],
        customParameters: { campaign: "spring", attempt: "2" },
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 }
      },
      streamSid: "MZ18ad3ab5a668481ce02b83e7395059f0"
    }))
    return { protocol, events }
  }

  it("starts with the stream sid, the call sid as call id and the custom parameters", () => {
    expect(started().events).toEqual([{
      _tag: "Started",
      streamId: "MZ18ad3ab5a668481ce02b83e7395059f0",
      callId: "CA00000000000000000000000000000002",
      parameters: { campaign: "spring", attempt: "2" }
    }])
  })

  it("decodes a 20 ms base64 μ-law media message to 160 samples", () => {
    const { protocol } = started()
    const payload = [...Array(158).fill(0xff), 0x80, 0x00]
    const events = protocol.receive(json({
      event: "media",
      sequenceNumber: "3",
      media: { track: "inbound", chunk: "1", timestamp: "5", payload: base64(payload) },
      streamSid: "MZ18ad3ab5a668481ce02b83e7395059f0"
    }))
    const pcm = audioOf(events)
    expect(pcm).toHaveLength(160)
    expect(pcm.slice(0, 158).every((sample) => sample === 0)).toBe(true)
    expect(pcm.slice(158)).toEqual([32124, -32124])
  })

  it("ignores media of any track but the caller's", () => {
    const { protocol } = started()
    const media = (track: string) => json({ event: "media", media: { track, payload: base64([0x80]) } })
    expect(protocol.receive(media("outbound"))).toEqual([])
    expect(audioOf(protocol.receive(media("inbound")))).toEqual([32124])
  })

  it("turns mark, dtmf and stop into Played, Dtmf and Stopped", () => {
    const { protocol } = started()
    const streamSid = "MZ18ad3ab5a668481ce02b83e7395059f0"
    expect(protocol.receive(json({ event: "mark", sequenceNumber: "4", streamSid, mark: { name: "g1:m3" } })))
      .toEqual([{ _tag: "Played", name: "g1:m3" }])
    expect(
      protocol.receive(
        json({ event: "dtmf", streamSid, sequenceNumber: "5", dtmf: { track: "inbound_track", digit: "7" } })
      )
    )
      .toEqual([{ _tag: "Dtmf", digit: "7" }])
    expect(protocol.receive(json({
      event: "stop",
      sequenceNumber: "6",
      streamSid,
      stop: { accountSid: "AC00000000000000000000000000000001", callSid: "CA00000000000000000000000000000002" }
    }))).toEqual([{ _tag: "Stopped" }])
  })

  it("sends nothing before the stream has started (every message must name it)", () => {
    const protocol = mediaProtocolFor("twilio")
    expect(protocol.audio(ramp(320))).toEqual([])
    expect(protocol.mark("m")).toEqual([])
    expect(protocol.clear()).toEqual([])
  })

  it("frames agent audio into 160-byte μ-law media messages on the stream", () => {
    const { protocol } = started()
    const messages = protocol.audio(ramp(480)).map(parsed)
    expect(messages).toHaveLength(3)
    for (const message of messages) {
      expect(Object.keys(message).sort()).toEqual(["event", "media", "streamSid"])
      expect(message.event).toBe("media")
      expect(message.streamSid).toBe("MZ18ad3ab5a668481ce02b83e7395059f0")
      expect(Object.keys(message.media)).toEqual(["payload"])
      expect(bytesOf(message.media.payload)).toHaveLength(160)
    }
    // Silence is μ-law 0xFF; a raw payload has no WAV header.
    const silence = parsed(protocol.audio(new Int16Array(160))[0]!)
    expect(bytesOf(silence.media.payload)).toEqual(Array(160).fill(0xff))
  })

  it("holds a short tail until the next audio, and a mark flushes it padded with silence before the mark", () => {
    const { protocol } = started()
    expect(protocol.audio(ramp(200))).toHaveLength(1)
    expect(protocol.audio(ramp(100, 200))).toEqual([]) // 40 waiting + 100 = 140: still short of a packet
    const [tail, mark] = protocol.mark("reply-1:end").map(parsed)
    expect(bytesOf(tail!.media.payload)).toHaveLength(160)
    expect(bytesOf(tail!.media.payload).slice(140)).toEqual(Array(20).fill(0xff))
    expect(mark).toEqual({
      event: "mark",
      streamSid: "MZ18ad3ab5a668481ce02b83e7395059f0",
      mark: { name: "reply-1:end" }
    })
    expect(protocol.mark("again").map(parsed)).toEqual([
      { event: "mark", streamSid: "MZ18ad3ab5a668481ce02b83e7395059f0", mark: { name: "again" } }
    ])
  })

  it("clears the provider's queue and forgets the waiting tail", () => {
    const { protocol } = started()
    protocol.audio(ramp(100))
    expect(protocol.clear().map(parsed)).toEqual([{ event: "clear", streamSid: "MZ18ad3ab5a668481ce02b83e7395059f0" }])
    expect(protocol.mark("after-clear")).toHaveLength(1)
  })

  it("round-trips speech-level audio through μ-law within its quantisation error", () => {
    const { protocol } = started()
    const sent = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 5)))
    const payload = parsed(protocol.audio(sent)[0]!).media.payload as string
    const back = audioOf(protocol.receive(json({ event: "media", media: { track: "inbound", payload } })))
    back.forEach((sample, i) => expect(Math.abs(sample - sent[i]!)).toBeLessThanOrEqual(Math.abs(sent[i]!) / 16 + 8))
  })
})

describe("Vonage WebSockets (audio/l16;rate=16000)", () => {
  const connected = () => {
    const protocol = mediaProtocolFor("vonage")
    const events = protocol.receive(json({
      event: "websocket:connected",
      "content-type": "audio/l16;rate=16000",
      uuid: "63f61863-4a51-4f6b-86e1-46edebcf9356",
      run: "42"
    }))
    return { protocol, events }
  }

  it("starts on websocket:connected with the NCCO headers as parameters", () => {
    expect(connected().events).toEqual([{
      _tag: "Started",
      streamId: null,
      callId: "63f61863-4a51-4f6b-86e1-46edebcf9356",
      parameters: { uuid: "63f61863-4a51-4f6b-86e1-46edebcf9356", run: "42" }
    }])
  })

  it("reads binary 640-byte messages as 320 little-endian samples", () => {
    const { protocol } = connected()
    const samples = Array.from({ length: 320 }, (_, i) => (i % 2 === 0 ? i * 100 : -i * 100))
    expect(audioOf(protocol.receive(linear16(samples)))).toEqual(samples)
  })

  it("sends agent audio as binary 640-byte messages in 20 ms packets", () => {
    const { protocol } = connected()
    const out = protocol.audio(ramp(700))
    expect(out).toHaveLength(2)
    expect(out.map((message) => (message as Uint8Array).length)).toEqual([640, 640])
    expect(samplesOf(out[1]!)).toEqual([...ramp(320, 320)])
    const flushed = protocol.mark("m1")
    expect(samplesOf(flushed[0]!).slice(0, 60)).toEqual([...ramp(60, 640)])
    expect(samplesOf(flushed[0]!).slice(60)).toEqual(Array(260).fill(0))
  })

  it("marks with a notify action whose payload comes back in websocket:notify", () => {
    const { protocol } = connected()
    expect(protocol.mark("g2:m1").map(parsed)).toEqual([{ action: "notify", payload: { name: "g2:m1" } }])
    expect(protocol.receive(json({ event: "websocket:notify", payload: { name: "g2:m1" } })))
      .toEqual([{ _tag: "Played", name: "g2:m1" }])
  })

  it("clears with the clear action; websocket:cleared is only an acknowledgement", () => {
    const { protocol } = connected()
    expect(protocol.clear().map(parsed)).toEqual([{ action: "clear" }])
    expect(protocol.receive(json({ event: "websocket:cleared" }))).toEqual([])
  })

  it("reports websocket:dtmf digits", () => {
    const { protocol } = connected()
    expect(protocol.receive(json({ event: "websocket:dtmf", digit: "#", duration: 260 }))).toEqual([{
      _tag: "Dtmf",
      digit: "#"
    }])
  })
})

describe("Telnyx media streaming (PCMU, bidirectional rtp)", () => {
  const STREAM = "32DE0DEA-53CB-4B21-89A4-9E1819C043BC"
  const media = (sequence: number, sample: number, track = "inbound") =>
    json({
      event: "media",
      sequence_number: String(sequence),
      media: {
        track,
        chunk: String(sequence - 1),
        timestamp: String((sequence - 2) * 20),
        payload: base64(Array(160).fill(sample))
      },
      stream_id: STREAM
    })
  /** Which frames came out, by their first μ-law byte's decoded value. */
  const order = (events: ReadonlyArray<InboundMedia>) =>
    events.flatMap((
      event
    ): Array<number | string | undefined> => (event._tag === "Audio" ? [event.pcm[0]] : [event._tag]))
  const decoded = (byte: number) => {
    const protocol = mediaProtocolFor("telnyx")
    return audioOf(protocol.receive(json({ event: "media", media: { payload: base64([byte]) } })))[0]
  }
  const started = () => {
    const protocol = mediaProtocolFor("telnyx")
    expect(protocol.receive(json({ event: "connected", version: "1.0.0" }))).toEqual([])
    const events = protocol.receive(json({
      event: "start",
      sequence_number: "1",
      start: {
        user_id: "3E6F995F-85F7-4705-9741-53B116D28237",
        call_control_id: "v3:T02llQxIyaRkhfRKxgAP8nY511EhFLizdvdUKJiSw8d6A9BborherQ",
        client_state: "aGF2ZSBhIG5pY2UgZGF5ID1d",
        custom_parameters: { run: "7" },
        media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 }
      },
      stream_id: STREAM
    }))
    return { protocol, events }
  }

  it("starts with the stream id and the call control id", () => {
    expect(started().events).toEqual([{
      _tag: "Started",
      streamId: STREAM,
      callId: "v3:T02llQxIyaRkhfRKxgAP8nY511EhFLizdvdUKJiSw8d6A9BborherQ",
      parameters: { run: "7" }
    }])
  })

  it("releases media in sequence-number order", () => {
    const { protocol } = started()
    const out = [
      ...protocol.receive(media(2, 0x80)),
      ...protocol.receive(media(4, 0x82)),
      ...protocol.receive(media(3, 0x81)),
      ...protocol.receive(media(6, 0x84)),
      ...protocol.receive(media(5, 0x83))
    ]
    expect(order(out)).toEqual([0x80, 0x81, 0x82, 0x83, 0x84].map(decoded))
  })

  it("skips a missing frame once five later frames wait, fills its 20 ms with silence, and drops it if it turns up late", () => {
    const { protocol } = started()
    const out = [2, 4, 5, 6, 7, 8].flatMap((sequence) => protocol.receive(media(sequence, 0x80 + sequence)))
    const audio = out.flatMap((event) => (event._tag === "Audio" ? [event.pcm] : []))
    expect(audio.map((pcm) => pcm.length)).toEqual([160, 160, 160, 160, 160, 160, 160])
    expect(audio[1]!.every((sample) => sample === 0)).toBe(true)
    expect(order(out)).toEqual([decoded(0x82), 0, ...[4, 5, 6, 7, 8].map((sequence) => decoded(0x80 + sequence))])
    expect(protocol.inboundLoss!()).toEqual({ gaps: 1, concealedMs: 20, lateFrames: 0, reorderWindow: 5 })
    expect(protocol.receive(media(3, 0x83))).toEqual([])
    expect(order(protocol.receive(media(9, 0x89)))).toEqual([decoded(0x89)])
    // The late frame was counted, and the buffer now waits longer before giving up on a frame.
    expect(protocol.inboundLoss!()).toMatchObject({ lateFrames: 1, reorderWindow: 10 })
  })

  it("after a late frame waits longer for a straggler, and narrows again on a clean line", () => {
    const { protocol } = started()
    ;[2, 4, 5, 6, 7, 8].forEach((sequence) => protocol.receive(media(sequence, 0x80)))
    protocol.receive(media(3, 0x80))
    // Window 10: a frame nine places late is still put back in its place.
    const out = [10, 11, 12, 13, 14, 15, 16, 17, 18, 9].flatMap((sequence) =>
      protocol.receive(media(sequence, 0x80 + (sequence % 16)))
    )
    expect(order(out)).toEqual(
      [9, 10, 11, 12, 13, 14, 15, 16, 17, 18].map((sequence) => decoded(0x80 + (sequence % 16)))
    )
    expect(protocol.inboundLoss!()).toMatchObject({ gaps: 1, lateFrames: 1 })
    for (let sequence = 19; sequence < 19 + 250 * 5; sequence++) protocol.receive(media(sequence, 0x80))
    expect(protocol.inboundLoss!().reorderWindow).toBe(5)
  })

  it("does not fill a long pause in the media timestamps (a held or muted stream)", () => {
    const { protocol } = started()
    protocol.receive(media(2, 0x80))
    const resumed = json({
      event: "media",
      sequence_number: "3",
      media: { track: "inbound", chunk: "2", timestamp: "5000", payload: base64(Array(160).fill(0x81)) },
      stream_id: STREAM
    })
    expect(order(protocol.receive(resumed))).toEqual([decoded(0x81)])
    expect(protocol.inboundLoss!()).toMatchObject({ gaps: 0, concealedMs: 0 })
  })

  it("delivers a late mark even after its slot was skipped", () => {
    const { protocol } = started()
    ;[3, 4, 5, 6, 7, 8].forEach((sequence) => protocol.receive(media(sequence, 0x80)))
    expect(protocol.receive(json({ event: "mark", sequence_number: "2", stream_id: STREAM, mark: { name: "late" } })))
      .toEqual([{ _tag: "Played", name: "late" }])
  })

  it("flushes waiting frames, in order, when the stop arrives", () => {
    const { protocol } = started()
    expect(protocol.receive(media(3, 0x83))).toEqual([])
    const out = protocol.receive(
      json({ event: "stop", sequence_number: "4", stop: { call_control_id: "v3:x" }, stream_id: STREAM })
    )
    expect(order(out)).toEqual([decoded(0x83), "Stopped"])
  })

  it("ignores the outbound track when both tracks are streamed", () => {
    const { protocol } = started()
    expect(order([...protocol.receive(media(2, 0x80, "outbound")), ...protocol.receive(media(3, 0x81))]))
      .toEqual([decoded(0x81)])
  })

  it("passes mark, dtmf and error frames through", () => {
    const { protocol } = started()
    expect(protocol.receive(json({ event: "mark", sequence_number: "2", stream_id: STREAM, mark: { name: "m1" } })))
      .toEqual([{ _tag: "Played", name: "m1" }])
    expect(protocol.receive(json({ event: "dtmf", sequence_number: "3", stream_id: STREAM, dtmf: { digit: "9" } })))
      .toEqual([{ _tag: "Dtmf", digit: "9" }])
    expect(protocol.receive(json({ event: "error", payload: { code: 100002, title: "unknown_error", detail: "x" } })))
      .toEqual([])
  })

  it("sends base64 PCMU media, marks and clears", () => {
    const { protocol } = started()
    const [frame] = protocol.audio(new Int16Array(160)).map(parsed)
    expect(frame).toEqual({ event: "media", media: { payload: base64(Array(160).fill(0xff)) } })
    expect(protocol.mark("m2").map(parsed)).toEqual([{ event: "mark", mark: { name: "m2" } }])
    expect(protocol.clear().map(parsed)).toEqual([{ event: "clear" }])
  })
})

describe("Plivo audio streams (audio/x-mulaw;rate=8000, bidirectional)", () => {
  const STREAM = "20170ada-f610-433b-8758-c02a2aab3662"
  const started = () => {
    const protocol = mediaProtocolFor("plivo")
    const events = protocol.receive(json({
      event: "start",
      sequenceNumber: 0,
      start: {
        callId: "ca7b5fd6-2c57-4a5b-9eb2-d0b5bdbd8f5d",
        streamId: STREAM,
        accountId: "MA00000000000000000000",
        tracks: ["inbound"],
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000 }
      },
      extra_headers: "run=7,campaign=spring"
    }))
    return { protocol, events }
  }

  it("starts with the stream id, the call uuid and the extra headers as parameters", () => {
    expect(started().events).toEqual([{
      _tag: "Started",
      streamId: STREAM,
      callId: "ca7b5fd6-2c57-4a5b-9eb2-d0b5bdbd8f5d",
      parameters: { run: "7", campaign: "spring" }
    }])
  })

  it("decodes media and dtmf", () => {
    const { protocol } = started()
    expect(audioOf(protocol.receive(json({
      event: "media",
      sequenceNumber: 3,
      streamId: STREAM,
      media: { track: "inbound", timestamp: "1711441612466", chunk: 2, payload: base64(Array(160).fill(0x80)) }
    })))).toEqual(Array(160).fill(32124))
    expect(protocol.receive(json({ event: "dtmf", streamId: STREAM, dtmf: { digit: "4", track: "inbound" } })))
      .toEqual([{ _tag: "Dtmf", digit: "4" }])
  })

  it("plays audio as playAudio with its content type and rate", () => {
    const { protocol } = started()
    const [message] = protocol.audio(new Int16Array(160)).map(parsed)
    expect(message).toEqual({
      event: "playAudio",
      streamId: STREAM,
      media: { contentType: "audio/x-mulaw", sampleRate: 8000, payload: base64(Array(160).fill(0xff)) }
    })
  })

  it("marks with a checkpoint answered by playedStream, and clears with clearAudio", () => {
    const { protocol } = started()
    expect(protocol.mark("m1").map(parsed)).toEqual([{ event: "checkpoint", streamId: STREAM, name: "m1" }])
    expect(protocol.receive(json({ event: "playedStream", sequenceNumber: 9, streamId: STREAM, name: "m1" })))
      .toEqual([{ _tag: "Played", name: "m1" }])
    expect(protocol.clear().map(parsed)).toEqual([{ event: "clearAudio", streamId: STREAM }])
    expect(protocol.receive(json({ event: "clearedAudio", sequenceNumber: 10, streamId: STREAM }))).toEqual([])
  })

  it("reads extra headers given as a JSON object too", () => {
    const protocol = mediaProtocolFor("plivo")
    const [event] = protocol.receive(
      json({ event: "start", start: { streamId: STREAM, callId: "c" }, extra_headers: json({ run: "8" }) })
    )
    expect(event).toMatchObject({ parameters: { run: "8" } })
  })
})

describe("browser test call", () => {
  const started = (protocol: MediaProtocol = mediaProtocolFor("browser")) => {
    const events = protocol.receive(json({ event: "start", parameters: { agent: "a1", ignored: 5 } }))
    return { protocol, events }
  }

  it("starts on the page's start message", () => {
    expect(started().events).toEqual([{ _tag: "Started", streamId: null, callId: null, parameters: { agent: "a1" } }])
  })

  it("takes microphone PCM of any length and sends 640-byte packets", () => {
    const { protocol } = started()
    expect(audioOf(protocol.receive(linear16([1, -2, 3])))).toEqual([1, -2, 3])
    const out = protocol.audio(ramp(320))
    expect(out).toHaveLength(1)
    expect(samplesOf(out[0]!)).toEqual([...ramp(320)])
  })

  it("marks are echoed as played; clear and stop are plain events", () => {
    const { protocol } = started()
    expect(protocol.mark("m1").map(parsed)).toEqual([{ event: "mark", name: "m1" }])
    expect(protocol.receive(json({ event: "played", name: "m1" }))).toEqual([{ _tag: "Played", name: "m1" }])
    expect(protocol.clear().map(parsed)).toEqual([{ event: "clear" }])
    expect(protocol.receive(json({ event: "dtmf", digit: "1" }))).toEqual([{ _tag: "Dtmf", digit: "1" }])
    expect(protocol.receive(json({ event: "stop" }))).toEqual([{ _tag: "Stopped" }])
  })
})
