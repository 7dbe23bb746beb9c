import {
  jsonObject,
  linear16FromPcm,
  objectField,
  packetFramer,
  pcmFromLinear16,
  stringEntries,
  stringField
} from "./mediaFrames.ts"
import type { InboundMedia, MediaProtocol } from "./mediaProtocol.ts"

/**
 * Vonage Voice API WebSockets (developer.vonage.com/voice/voice-api/concepts/websockets), with the
 * endpoint's content type `audio/l16;rate=16000`: audio is binary little-endian linear PCM, one
 * 20 ms packet (640 bytes) per message both ways; control is JSON text. The first text message,
 * `websocket:connected`, carries the headers our NCCO set, which become the stream's parameters.
 * Vonage has no stream id and no stop message: the call ends when the socket closes.
 */
const PACKET_SAMPLES = 320

export const vonageMediaProtocol = (): MediaProtocol => {
  const framer = packetFramer(PACKET_SAMPLES)

  const receive = (message: string | Uint8Array): ReadonlyArray<InboundMedia> => {
    if (typeof message !== "string") {
      const pcm = pcmFromLinear16(message)
      return pcm.length === 0 ? [] : [{ _tag: "Audio", pcm }]
    }
    const json = jsonObject(message)
    switch (stringField(json, "event")) {
      case "websocket:connected": {
        const parameters = stringEntries(json, ["event", "content-type"])
        return [{ _tag: "Started", streamId: null, callId: parameters["uuid"] ?? null, parameters }]
      }
      case "websocket:notify": {
        // Vonage returns the notify action's payload as it was sent.
        const name = stringField(objectField(json, "payload"), "name")
        return name === null ? [] : [{ _tag: "Played", name }]
      }
      case "websocket:dtmf": {
        const digit = stringField(json, "digit") ?? stringField(objectField(json, "dtmf"), "digit")
        return digit === null ? [] : [{ _tag: "Dtmf", digit }]
      }
      default:
        return []
    }
  }

  return {
    sampleRate: 16000,
    receive,
    audio: (pcm) => framer.push(pcm).map(linear16FromPcm),
    mark: (name) => [
      ...framer.flush().map(linear16FromPcm),
      JSON.stringify({ action: "notify", payload: { name } })
    ],
    clear: () => {
      framer.drop()
      return [JSON.stringify({ action: "clear" })]
    }
  }
}
