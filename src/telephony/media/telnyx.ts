import { framedOutput } from "./framedOutput.ts"
import { callerMuLawAudio, dtmf, played } from "./inboundEvents.ts"
import { type JsonObject, jsonObject, muLawBase64, objectField, stringEntries, stringField } from "./mediaFrames.ts"
import type { InboundMedia, MediaProtocol } from "./mediaProtocol.ts"

/**
 * Telnyx media streaming with `stream_bidirectional_mode: "rtp"` and PCMU
 * (developers.telnyx.com/api-reference/websockets/stream-call-media-over-websocket): JSON text both
 * ways, base64 μ-law at 8 kHz. Telnyx does not guarantee frame order, so frames are released in
 * `sequence_number` order (the start frame is 1). A frame that never arrives would stall the
 * caller's audio, so once REORDER_WINDOW later frames are waiting the gap is skipped; media that
 * turns up after its slot was skipped is dropped, while late control frames still count.
 */
const PACKET_SAMPLES = 160
const FIRST_SEQUENCE = 1
/** Frames held back waiting for a gap to fill: 100 ms of audio, enough for network reordering yet short enough not to be heard as delay. */
const REORDER_WINDOW = 5

const sequenceNumber = (json: JsonObject): number | null => {
  const raw = json["sequence_number"]
  const value = typeof raw === "string" ? Number(raw) : typeof raw === "number" ? raw : Number.NaN
  return Number.isSafeInteger(value) ? value : null
}

export const telnyxMediaProtocol = (): MediaProtocol => {
  const waiting = new Map<number, JsonObject>()
  let expected = FIRST_SEQUENCE

  const handle = (json: JsonObject): ReadonlyArray<InboundMedia> => {
    switch (stringField(json, "event")) {
      case "start": {
        const start = objectField(json, "start")
        const streamId = stringField(json, "stream_id")
        if (start === null || streamId === null) return []
        return [{
          _tag: "Started",
          streamId,
          callId: stringField(start, "call_control_id"),
          parameters: stringEntries(objectField(start, "custom_parameters"))
        }]
      }
      case "media":
        return callerMuLawAudio(json)
      case "mark":
        return played(stringField(objectField(json, "mark"), "name"))
      case "dtmf":
        return dtmf(stringField(objectField(json, "dtmf"), "digit"))
      case "stop":
        return [{ _tag: "Stopped" }]
      default:
        return []
    }
  }

  const release = (out: Array<InboundMedia>) => {
    for (let next = waiting.get(expected); next !== undefined; next = waiting.get(expected)) {
      waiting.delete(expected)
      expected++
      out.push(...handle(next))
    }
  }

  const releaseAll = (out: Array<InboundMedia>) => {
    for (const sequence of [...waiting.keys()].sort((a, b) => a - b)) {
      out.push(...handle(waiting.get(sequence)!))
      expected = sequence + 1
    }
    waiting.clear()
  }

  const receive = (message: string | Uint8Array): ReadonlyArray<InboundMedia> => {
    const json = jsonObject(message)
    if (json === null) return []
    const sequence = sequenceNumber(json)
    if (sequence === null) return handle(json)
    if (sequence < expected || waiting.has(sequence)) {
      return stringField(json, "event") === "media" ? [] : handle(json)
    }
    const out: Array<InboundMedia> = []
    waiting.set(sequence, json)
    // Nothing follows a stop, so whatever is still waiting goes out with it.
    if (stringField(json, "event") === "stop") releaseAll(out)
    release(out)
    while (waiting.size >= REORDER_WINDOW) {
      expected = Math.min(...waiting.keys())
      release(out)
    }
    return out
  }

  return {
    sampleRate: 8000,
    receive,
    ...framedOutput({
      packetSamples: PACKET_SAMPLES,
      packet: (packet) => JSON.stringify({ event: "media", media: { payload: muLawBase64(packet) } }),
      mark: (name) => JSON.stringify({ event: "mark", mark: { name } }),
      clear: () => JSON.stringify({ event: "clear" })
    })
  }
}
