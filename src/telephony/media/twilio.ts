import { framedOutput } from "./framedOutput.ts"
import { callerMuLawAudio, dtmf, played } from "./inboundEvents.ts"
import { jsonObject, muLawBase64, objectField, stringEntries, stringField } from "./mediaFrames.ts"
import type { InboundMedia, MediaProtocol } from "./mediaProtocol.ts"

/**
 * Twilio Media Streams over a bidirectional `<Connect><Stream>`
 * (twilio.com/docs/voice/media-streams/websocket-messages): JSON text both ways, audio as base64
 * μ-law at 8 kHz. Every message we send names the stream, so nothing goes out before `start`.
 */
const PACKET_SAMPLES = 160

export const twilioMediaProtocol = (): MediaProtocol => {
  let streamSid: string | null = null

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

  return {
    sampleRate: 8000,
    receive,
    ...framedOutput({
      packetSamples: PACKET_SAMPLES,
      packet: (packet) => JSON.stringify({ event: "media", streamSid, media: { payload: muLawBase64(packet) } }),
      mark: (name) => JSON.stringify({ event: "mark", streamSid, mark: { name } }),
      clear: () => JSON.stringify({ event: "clear", streamSid }),
      ready: () => streamSid !== null
    })
  }
}
