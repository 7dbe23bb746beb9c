import { framedOutput } from "./framedOutput.ts"
import { dtmf, linear16Audio, played } from "./inboundEvents.ts"
import { jsonObject, linear16FromPcm, objectField, stringEntries, stringField } from "./mediaFrames.ts"
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
  const receive = (message: string | Uint8Array): ReadonlyArray<InboundMedia> => {
    if (typeof message !== "string") return linear16Audio(message)
    const json = jsonObject(message)
    switch (stringField(json, "event")) {
      case "websocket:connected": {
        const parameters = stringEntries(json, ["event", "content-type"])
        return [{ _tag: "Started", streamId: null, callId: parameters["uuid"] ?? null, parameters }]
      }
      case "websocket:notify":
        // Vonage returns the notify action's payload as it was sent.
        return played(stringField(objectField(json, "payload"), "name"))
      case "websocket:dtmf":
        return dtmf(stringField(json, "digit") ?? stringField(objectField(json, "dtmf"), "digit"))
      default:
        return []
    }
  }

  return {
    sampleRate: 16000,
    receive,
    ...framedOutput({
      packetSamples: PACKET_SAMPLES,
      packet: linear16FromPcm,
      mark: (name) => JSON.stringify({ action: "notify", payload: { name } }),
      clear: () => JSON.stringify({ action: "clear" })
    })
  }
}
