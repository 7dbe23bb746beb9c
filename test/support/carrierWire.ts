/**
 * The carrier's side of each provider's media stream, written from the providers' documentation
 * and independent of the product's codecs in src/telephony/media (and of src/audio), so a
 * misreading there is not mirrored here:
 * - Twilio: twilio.com/docs/voice/media-streams/websocket-messages
 * - Telnyx: developers.telnyx.com/api-reference/websockets/stream-call-media-over-websocket
 * - Vonage: developer.vonage.com/voice/voice-api/concepts/websockets
 * - Plivo:  plivo.com/docs/voice/xml/the-stream-element (bidirectional audio stream events)
 * - browser: the format documented in src/telephony/media/browser.ts
 */
export type CarrierProvider = "twilio" | "vonage" | "telnyx" | "plivo" | "browser"

interface CallIdentity {
  readonly callId: string
  readonly streamId: string
  readonly accountId: string
  readonly parameters: Readonly<Record<string, string>>
}

export type WireMessage = string | Uint8Array

/** What the agent side sent, as the carrier understands it. */
export type AgentMessage =
  /** `problem`: playable, but not as the provider asks (e.g. a Vonage message that is not one 20 ms packet). */
  | { readonly kind: "audio"; readonly pcm: Int16Array; readonly problem?: string }
  | { readonly kind: "mark"; readonly name: string }
  | { readonly kind: "clear" }
  /** Browser calls: how the conversation goes (`transcript`, `tool_call` and `node` events). */
  | { readonly kind: "progress"; readonly event: Record<string, any> }
  | { readonly kind: "invalid"; readonly reason: string }

interface CarrierWire {
  readonly sampleRate: 8000 | 16000
  readonly frameSamples: number
  readonly opening: () => ReadonlyArray<WireMessage>
  /** One 20 ms frame of the callee's audio; `index` counts frames from 0. */
  readonly media: (frame: Int16Array, index: number) => WireMessage
  readonly dtmf: (digit: string) => WireMessage
  readonly markPlayed: (name: string) => WireMessage
  /** The acknowledgement some carriers send after a clear. */
  readonly cleared: () => ReadonlyArray<WireMessage>
  /** What the carrier sends when the callee hangs up, before it closes the socket. */
  readonly stop: () => ReadonlyArray<WireMessage>
  readonly parse: (data: Uint8Array, isBinary: boolean) => AgentMessage
}

// G.711 μ-law, straight from the ITU-T G.711 segment definition (bias 0x84, clip 32635).
const muLawToLinear = (byte: number) => {
  const u = ~byte & 0xff
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4)) - 0x84
  return u & 0x80 ? -magnitude : magnitude
}
const linearToMuLaw = (sample: number) => {
  const sign = sample < 0 ? 0x80 : 0x00
  const magnitude = Math.min(Math.abs(sample), 32635) + 0x84
  let segment = 7
  while (segment > 0 && (magnitude & (0x4000 >> (7 - segment))) === 0) segment--
  return ~(sign | (segment << 4) | ((magnitude >> (segment + 3)) & 0x0f)) & 0xff
}
const muLawBase64 = (frame: Int16Array) => Buffer.from(Array.from(frame, linearToMuLaw)).toString("base64")
const pcmOfMuLawBase64 = (payload: string) => Int16Array.from(Buffer.from(payload, "base64"), muLawToLinear)
const linear16 = (frame: Int16Array) => {
  const bytes = Buffer.alloc(frame.length * 2)
  frame.forEach((sample, i) => bytes.writeInt16LE(sample, i * 2))
  return new Uint8Array(bytes)
}
const pcmOfLinear16 = (data: Uint8Array) => {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  return Int16Array.from({ length: bytes.length >> 1 }, (_, i) => bytes.readInt16LE(i * 2))
}

const text = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8")
const jsonOf = (data: Uint8Array): Record<string, any> | null => {
  try {
    const value: unknown = JSON.parse(text(data))
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, any>) : null
  } catch {
    return null
  }
}
const invalid = (reason: string): AgentMessage => ({ kind: "invalid", reason })
/** A base64 payload that starts with a RIFF header would be played as a click. */
const mediaPayload = (payload: unknown): AgentMessage => {
  if (typeof payload !== "string" || payload.length === 0) return invalid("media without a base64 payload")
  if (Buffer.from(payload, "base64").subarray(0, 4).toString("latin1") === "RIFF") {
    return invalid("media payload carries a WAV header")
  }
  return { kind: "audio", pcm: pcmOfMuLawBase64(payload) }
}

const twilio = (call: CallIdentity): CarrierWire => {
  let sequence = 0
  const next = () => String(++sequence)
  const streamSid = call.streamId
  return {
    sampleRate: 8000,
    frameSamples: 160,
    opening: () => [
      JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }),
      JSON.stringify({
        event: "start",
        sequenceNumber: next(),
        start: {
          accountSid: call.accountId,
          streamSid,
          callSid: call.callId,
          tracks: ["inbound"],
          customParameters: call.parameters,
          mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 }
        },
        streamSid
      })
    ],
    media: (frame, index) =>
      JSON.stringify({
        event: "media",
        sequenceNumber: next(),
        media: {
          track: "inbound",
          chunk: String(index + 1),
          timestamp: String(index * 20),
          payload: muLawBase64(frame)
        },
        streamSid
      }),
    dtmf: (digit) =>
      JSON.stringify({ event: "dtmf", streamSid, sequenceNumber: next(), dtmf: { track: "inbound_track", digit } }),
    markPlayed: (name) => JSON.stringify({ event: "mark", sequenceNumber: next(), streamSid, mark: { name } }),
    cleared: () => [],
    stop: () => [
      JSON.stringify({
        event: "stop",
        sequenceNumber: next(),
        streamSid,
        stop: { accountSid: call.accountId, callSid: call.callId }
      })
    ],
    parse: (data, isBinary) => {
      const json = isBinary ? null : jsonOf(data)
      if (json === null) return invalid(isBinary ? "binary message on a JSON stream" : "not JSON")
      if (json.streamSid !== streamSid) return invalid(`${json.event} for stream ${json.streamSid}, not ${streamSid}`)
      switch (json.event) {
        case "media":
          return mediaPayload(json.media?.payload)
        case "mark":
          return typeof json.mark?.name === "string"
            ? { kind: "mark", name: json.mark.name }
            : invalid("mark without a name")
        case "clear":
          return { kind: "clear" }
        default:
          return invalid(`unknown event ${json.event}`)
      }
    }
  }
}

const telnyx = (call: CallIdentity): CarrierWire => {
  let sequence = 0
  const next = () => String(++sequence)
  const streamId = call.streamId
  return {
    sampleRate: 8000,
    frameSamples: 160,
    opening: () => [
      JSON.stringify({ event: "connected", version: "1.0.0" }),
      JSON.stringify({
        event: "start",
        sequence_number: next(),
        start: {
          user_id: call.accountId,
          call_control_id: call.callId,
          client_state: null,
          custom_parameters: call.parameters,
          media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 }
        },
        stream_id: streamId
      })
    ],
    media: (frame, index) =>
      JSON.stringify({
        event: "media",
        sequence_number: next(),
        media: {
          track: "inbound",
          chunk: String(index + 1),
          timestamp: String(index * 20),
          payload: muLawBase64(frame)
        },
        stream_id: streamId
      }),
    dtmf: (digit) => JSON.stringify({ event: "dtmf", sequence_number: next(), stream_id: streamId, dtmf: { digit } }),
    markPlayed: (name) =>
      JSON.stringify({ event: "mark", sequence_number: next(), stream_id: streamId, mark: { name } }),
    cleared: () => [],
    stop: () => [
      JSON.stringify({
        event: "stop",
        sequence_number: next(),
        stop: { user_id: call.accountId, call_control_id: call.callId },
        stream_id: streamId
      })
    ],
    parse: (data, isBinary) => {
      const json = isBinary ? null : jsonOf(data)
      if (json === null) return invalid(isBinary ? "binary message on a JSON stream" : "not JSON")
      switch (json.event) {
        case "media":
          return mediaPayload(json.media?.payload)
        case "mark":
          return typeof json.mark?.name === "string"
            ? { kind: "mark", name: json.mark.name }
            : invalid("mark without a name")
        case "clear":
          return { kind: "clear" }
        default:
          return invalid(`unknown event ${json.event}`)
      }
    }
  }
}

/**
 * Plivo's `extraHeaders` attribute takes only [A-Z], [a-z] and [0-9] in its keys and values and at
 * most 512 bytes (plivo.com/docs/voice/xml/audiostream): a stream asked for with anything else is
 * not one Plivo would start, so the stand-in refuses it.
 */
const plivoExtraHeaders = (parameters: Readonly<Record<string, string>>) => {
  const pairs = Object.entries(parameters)
  const refused = pairs.find(([key, value]) => !/^[A-Za-z0-9]+$/.test(key) || !/^[A-Za-z0-9]+$/.test(value))
  if (refused) throw new Error(`Plivo extraHeaders allow only [A-Za-z0-9]: ${refused[0]}=${refused[1]}`)
  const text = pairs.map(([key, value]) => `${key}=${value}`).join(",")
  if (Buffer.byteLength(text) > 512) {
    throw new Error(`Plivo extraHeaders are at most 512 bytes, not ${Buffer.byteLength(text)}`)
  }
  return text
}

const plivo = (call: CallIdentity): CarrierWire => {
  let sequence = 0
  const streamId = call.streamId
  const extraHeaders = plivoExtraHeaders(call.parameters)
  return {
    sampleRate: 8000,
    frameSamples: 160,
    opening: () => [
      JSON.stringify({
        event: "start",
        sequenceNumber: sequence++,
        start: {
          callId: call.callId,
          streamId,
          accountId: call.accountId,
          tracks: ["inbound"],
          mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000 }
        },
        extra_headers: extraHeaders
      })
    ],
    media: (frame, index) =>
      JSON.stringify({
        event: "media",
        sequenceNumber: sequence++,
        streamId,
        media: { track: "inbound", timestamp: String(Date.now()), chunk: index + 1, payload: muLawBase64(frame) },
        extra_headers: extraHeaders
      }),
    dtmf: (digit) =>
      JSON.stringify({
        event: "dtmf",
        sequenceNumber: sequence++,
        streamId,
        dtmf: { track: "inbound", digit, timestamp: String(Date.now()) }
      }),
    markPlayed: (name) => JSON.stringify({ event: "playedStream", sequenceNumber: sequence++, streamId, name }),
    cleared: () => [JSON.stringify({ event: "clearedAudio", sequenceNumber: sequence++, streamId })],
    // Plivo ends the stream by closing the socket.
    stop: () => [],
    parse: (data, isBinary) => {
      const json = isBinary ? null : jsonOf(data)
      if (json === null) return invalid(isBinary ? "binary message on a JSON stream" : "not JSON")
      switch (json.event) {
        case "playAudio": {
          const media = json.media
          if (media?.contentType !== "audio/x-mulaw" || media?.sampleRate !== 8000) {
            return invalid(`playAudio as ${media?.contentType} at ${media?.sampleRate}`)
          }
          return mediaPayload(media.payload)
        }
        case "checkpoint":
          if (json.streamId !== streamId) return invalid(`checkpoint for stream ${json.streamId}`)
          return typeof json.name === "string"
            ? { kind: "mark", name: json.name }
            : invalid("checkpoint without a name")
        case "clearAudio":
          return json.streamId === streamId ? { kind: "clear" } : invalid(`clearAudio for stream ${json.streamId}`)
        default:
          return invalid(`unknown event ${json.event}`)
      }
    }
  }
}

/** Vonage and the browser call share binary 16 kHz linear PCM; they differ in their text control. */
const binary16k = (
  control: Omit<CarrierWire, "sampleRate" | "frameSamples" | "media" | "parse"> & {
    readonly packetBytes: number | null
    readonly parseText: (json: Record<string, any>) => AgentMessage
  }
): CarrierWire => ({
  ...control,
  sampleRate: 16000,
  frameSamples: 320,
  media: (frame) => linear16(frame),
  parse: (data, isBinary) => {
    if (isBinary) {
      if (data.length % 2 !== 0) return invalid(`odd-length audio of ${data.length} bytes`)
      const pcm = pcmOfLinear16(data)
      return control.packetBytes === null || data.length === control.packetBytes
        ? { kind: "audio", pcm }
        : { kind: "audio", pcm, problem: `audio message of ${data.length} bytes, not ${control.packetBytes}` }
    }
    const json = jsonOf(data)
    return json === null ? invalid("not JSON") : control.parseText(json)
  }
})

const vonage = (call: CallIdentity): CarrierWire =>
  binary16k({
    // Vonage wants every message to be one 20 ms packet (vonage-node-sdk#124).
    packetBytes: 640,
    opening: () => [
      JSON.stringify({ event: "websocket:connected", "content-type": "audio/l16;rate=16000", ...call.parameters })
    ],
    dtmf: (digit) => JSON.stringify({ event: "websocket:dtmf", digit, duration: 250 }),
    markPlayed: (name) => JSON.stringify({ event: "websocket:notify", payload: { name } }),
    cleared: () => [JSON.stringify({ event: "websocket:cleared" })],
    stop: () => [],
    parseText: (json) => {
      if (json.action === "clear") return { kind: "clear" }
      if (json.action === "notify") {
        return typeof json.payload?.name === "string"
          ? { kind: "mark", name: json.payload.name }
          : invalid("notify without payload.name")
      }
      return invalid(`unknown action ${json.action}`)
    }
  })

const browser = (call: CallIdentity): CarrierWire =>
  binary16k({
    packetBytes: null,
    opening: () => [JSON.stringify({ event: "start", parameters: call.parameters })],
    dtmf: (digit) => JSON.stringify({ event: "dtmf", digit }),
    markPlayed: (name) => JSON.stringify({ event: "played", name }),
    cleared: () => [],
    stop: () => [JSON.stringify({ event: "stop" })],
    parseText: (json) => {
      if (json.event === "clear") return { kind: "clear" }
      if (json.event === "mark") {
        return typeof json.name === "string"
          ? { kind: "mark", name: json.name }
          : invalid("mark without a name")
      }
      if (json.event === "transcript" || json.event === "tool_call" || json.event === "node") {
        return { kind: "progress", event: json }
      }
      return invalid(`unknown event ${json.event}`)
    }
  })

/**
 * The URL a carrier opens for the stream URL an answer document (or a dial request) gave it, as
 * each documents it:
 * - Twilio: `<Stream url>` does not support query strings; Twilio connects without them, and
 *   values for the WebSocket server go in nested `<Parameter>` nouns, delivered in the `start`
 *   message's `customParameters` (twilio.com/docs/voice/twiml/stream, errors 31920 and 31922).
 *   It signs the URL it opens (X-Twilio-Signature).
 *   Twilio also accepts only `wss` URLs (error 31922); loopback has no TLS, so that one is not
 *   enforced: the stand-in connects in the clear and signs the URL as written.
 * - Telnyx (`stream_url`, TeXML `<Stream url>`), Vonage (NCCO websocket `uri`) and Plivo (`<Stream>`
 *   text) document no such restriction: the URL is opened as written.
 */
export const streamRequestUrl = (provider: CarrierProvider, url: string) => {
  if (provider !== "twilio") return url
  const query = url.search(/[?#]/)
  return query === -1 ? url : url.slice(0, query)
}

export const carrierWire = (provider: CarrierProvider, call: CallIdentity): CarrierWire => {
  switch (provider) {
    case "twilio":
      return twilio(call)
    case "telnyx":
      return telnyx(call)
    case "plivo":
      return plivo(call)
    case "vonage":
      return vonage(call)
    case "browser":
      return browser(call)
  }
}
