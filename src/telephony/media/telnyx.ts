import { framedOutput } from "./framedOutput.ts"
import { callerMuLawAudio, dtmf, played } from "./inboundEvents.ts"
import { type JsonObject, jsonObject, muLawBase64, objectField, stringEntries, stringField } from "./mediaFrames.ts"
import type { InboundMedia, MediaProtocol } from "./mediaProtocol.ts"

/**
 * Telnyx media streaming with `stream_bidirectional_mode: "rtp"` and PCMU
 * (developers.telnyx.com/api-reference/websockets/stream-call-media-over-websocket): JSON text both
 * ways, base64 μ-law at 8 kHz. Telnyx does not guarantee frame order, so frames pass a small
 * adaptive jitter buffer: they are released in `sequence_number` order (the start frame is 1); a
 * frame that never arrives would stall the caller's audio, so once `window` later frames wait the
 * gap is skipped. Media that turns up after its slot was skipped is dropped and counted (late
 * control frames still count), and each late frame widens the window (up to 500 ms) while a clean
 * line narrows it back. Audio missing by the media timestamps (lost packets) is filled with
 * silence and counted, so the caller's audio keeps its timing for voice detection and recording.
 */
const PACKET_SAMPLES = 160
const FIRST_SEQUENCE = 1
const SAMPLE_RATE = 8000
/** Frames held back waiting for a gap to fill, at first and at least: 100 ms of audio, enough for network reordering yet short enough not to be heard as delay. */
const MIN_REORDER_WINDOW = 5
const MAX_REORDER_WINDOW = 25
/** A late frame widens the window by this many frames; this many frames in order narrow it by one. */
const WINDOW_GROWTH = 5
const CLEAN_FRAMES_TO_SHRINK = 250
/** A gap in the media timestamps longer than this is not filled (the far end paused its stream: hold, mute). */
const MAX_CONCEALED_MS = 1000
/** Timestamps are whole milliseconds: differences within this are clock rounding, not loss. */
const TIMESTAMP_SLACK_MS = 5

const sequenceNumber = (json: JsonObject): number | null => {
  const raw = json["sequence_number"]
  const value = typeof raw === "string" ? Number(raw) : typeof raw === "number" ? raw : Number.NaN
  return Number.isSafeInteger(value) ? value : null
}

export const telnyxMediaProtocol = (): MediaProtocol => {
  const waiting = new Map<number, JsonObject>()
  let expected = FIRST_SEQUENCE
  let window = MIN_REORDER_WINDOW
  let cleanFrames = 0
  let gaps = 0
  let concealedMs = 0
  let lateFrames = 0
  /** Where the next media frame should start, by the media timestamps (null until the first). */
  let nextTimestamp: number | null = null

  /** The caller's audio, with silence first where frames before it were lost. */
  const media = (json: JsonObject): ReadonlyArray<InboundMedia> => {
    const audio = callerMuLawAudio(json)
    const frame = audio[0]
    if (frame === undefined || frame._tag !== "Audio") return audio
    const raw = stringField(objectField(json, "media"), "timestamp")
    const timestamp = raw === null ? Number.NaN : Number(raw)
    if (!Number.isFinite(timestamp)) return audio
    const missingMs = nextTimestamp === null ? 0 : timestamp - nextTimestamp
    nextTimestamp = timestamp + (frame.pcm.length * 1000) / SAMPLE_RATE
    if (missingMs <= TIMESTAMP_SLACK_MS || missingMs > MAX_CONCEALED_MS) return audio
    gaps++
    concealedMs += missingMs
    return [{ _tag: "Audio", pcm: new Int16Array(Math.round((missingMs * SAMPLE_RATE) / 1000)) }, frame]
  }

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
        return media(json)
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
      if (stringField(json, "event") !== "media") return handle(json)
      if (sequence < expected) {
        lateFrames++
        window = Math.min(MAX_REORDER_WINDOW, window + WINDOW_GROWTH)
        cleanFrames = 0
      }
      return []
    }
    const out: Array<InboundMedia> = []
    waiting.set(sequence, json)
    // Nothing follows a stop, so whatever is still waiting goes out with it.
    if (stringField(json, "event") === "stop") releaseAll(out)
    release(out)
    while (waiting.size >= window) {
      expected = Math.min(...waiting.keys())
      release(out)
    }
    if (waiting.size === 0 && ++cleanFrames >= CLEAN_FRAMES_TO_SHRINK) {
      cleanFrames = 0
      window = Math.max(MIN_REORDER_WINDOW, window - 1)
    }
    return out
  }

  return {
    sampleRate: SAMPLE_RATE,
    receive,
    inboundLoss: () => ({ gaps, concealedMs, lateFrames, reorderWindow: window }),
    ...framedOutput({
      packetSamples: PACKET_SAMPLES,
      packet: (packet) => JSON.stringify({ event: "media", media: { payload: muLawBase64(packet) } }),
      mark: (name) => JSON.stringify({ event: "mark", mark: { name } }),
      clear: () => JSON.stringify({ event: "clear" })
    })
  }
}
