import {
  jsonObject,
  muLawBase64,
  objectField,
  packetFramer,
  pcmFromMuLawBase64,
  stringEntries,
  stringField
} from "./mediaFrames.ts"
import type { InboundMedia, MediaProtocol } from "./mediaProtocol.ts"

/**
 * Twilio Media Streams over a bidirectional `<Connect><Stream>`
 * (twilio.com/docs/voice/media-streams/websocket-messages): JSON text both ways, audio as base64
 * μ-law at 8 kHz. Every message we send names the stream, so nothing goes out before `start`.
 */
const PACKET_SAMPLES = 160

export const twilioMediaProtocol = (): MediaProtocol => {
  let streamSid: string | null = null
  const framer = packetFramer(PACKET_SAMPLES)
  const media = (packet: Int16Array) =>
    JSON.stringify({ event: "media", streamSid, media: { payload: muLawBase64(packet) } })

  const receive = (message: string | Uint8Array): ReadonlyArray<InboundMedia> => {
    const json = jsonObject(message)
    switch (stringField(json, "event")) {
      case "start": {
        const start = objectField(json, "start")
        const sid = stringField(start, "streamSid") ?? stringField(json, "streamSid")
        if (sid === null) return []
        streamSid = sid
        return [{
          _tag: "Started",
          streamId: streamSid,
          callId: stringField(start, "callSid"),
          parameters: stringEntries(objectField(start, "customParameters"))
        }]
      }
      case "media": {
        const body = objectField(json, "media")
        const track = stringField(body, "track")
        const payload = stringField(body, "payload")
        // A bidirectional stream carries only the caller's track; anything else is not the caller.
        if (payload === null || (track !== null && track !== "inbound")) return []
        const pcm = pcmFromMuLawBase64(payload)
        return pcm.length === 0 ? [] : [{ _tag: "Audio", pcm }]
      }
      case "mark": {
        const name = stringField(objectField(json, "mark"), "name")
        return name === null ? [] : [{ _tag: "Played", name }]
      }
      case "dtmf": {
        const digit = stringField(objectField(json, "dtmf"), "digit")
        return digit === null ? [] : [{ _tag: "Dtmf", digit }]
      }
      case "stop":
        return [{ _tag: "Stopped" }]
      default:
        return []
    }
  }

  return {
    sampleRate: 8000,
    receive,
    audio: (pcm) => (streamSid === null ? [] : framer.push(pcm).map(media)),
    mark: (name) =>
      streamSid === null
        ? []
        : [...framer.flush().map(media), JSON.stringify({ event: "mark", streamSid, mark: { name } })],
    clear: () => {
      framer.drop()
      return streamSid === null ? [] : [JSON.stringify({ event: "clear", streamSid })]
    }
  }
}
