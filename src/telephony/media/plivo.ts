import { framedOutput } from "./framedOutput.ts"
import { callerMuLawAudio, dtmf, played } from "./inboundEvents.ts"
import {
  isObject,
  type JsonObject,
  jsonObject,
  muLawBase64,
  objectField,
  stringEntries,
  stringField
} from "./mediaFrames.ts"
import type { InboundMedia, MediaProtocol } from "./mediaProtocol.ts"

/**
 * Plivo audio streams with `bidirectional="true"` and `contentType="audio/x-mulaw;rate=8000"`
 * (plivo.com/docs/voice/xml/the-stream-element): JSON text both ways, base64 μ-law at 8 kHz.
 * Agent audio goes out as `playAudio`, a mark as a `checkpoint` that Plivo answers with
 * `playedStream`, barge-in as `clearAudio`. Checkpoints and clears name the stream, so nothing
 * goes out before `start`.
 */
const PACKET_SAMPLES = 160

/** `extraHeaders` from the Stream element, which Plivo relays as "a=1,b=2" (or as a JSON object). */
const extraHeaders = (value: unknown): Record<string, string> => {
  if (isObject(value)) return stringEntries(value)
  if (typeof value !== "string") return {}
  const json = jsonObject(value)
  if (json !== null) return stringEntries(json)
  const headers: Record<string, string> = {}
  for (const pair of value.split(",")) {
    const separator = pair.indexOf("=")
    if (separator > 0) headers[pair.slice(0, separator).trim()] = pair.slice(separator + 1).trim()
  }
  return headers
}

export const plivoMediaProtocol = (): MediaProtocol => {
  let streamId: string | null = null

  const started = (json: JsonObject): ReadonlyArray<InboundMedia> => {
    const start = objectField(json, "start")
    const id = stringField(start, "streamId") ?? stringField(json, "streamId")
    if (id === null) return []
    streamId = id
    return [{
      _tag: "Started",
      streamId,
      callId: stringField(start, "callId"),
      parameters: extraHeaders(json["extra_headers"] ?? start?.["extra_headers"])
    }]
  }

  const receive = (message: string | Uint8Array): ReadonlyArray<InboundMedia> => {
    const json = jsonObject(message)
    switch (stringField(json, "event")) {
      case "start":
        return started(json!)
      case "media":
        return callerMuLawAudio(json)
      case "playedStream":
        return played(stringField(json, "name"))
      case "dtmf":
        return dtmf(stringField(objectField(json, "dtmf"), "digit"))
      case "stop":
        return [{ _tag: "Stopped" }]
      default:
        return []
    }
  }

  return {
    sampleRate: 8000,
    receive,
    ...framedOutput({
      packetSamples: PACKET_SAMPLES,
      packet: (packet) =>
        JSON.stringify({
          event: "playAudio",
          streamId,
          media: { contentType: "audio/x-mulaw", sampleRate: 8000, payload: muLawBase64(packet) }
        }),
      mark: (name) => JSON.stringify({ event: "checkpoint", streamId, name }),
      clear: () => JSON.stringify({ event: "clearAudio", streamId }),
      ready: () => streamId !== null
    })
  }
}
