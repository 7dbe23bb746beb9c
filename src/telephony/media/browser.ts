import { framedOutput } from "./framedOutput.ts"
import { dtmf, linear16Audio, played } from "./inboundEvents.ts"
import { jsonObject, linear16FromPcm, objectField, stringEntries, stringField } from "./mediaFrames.ts"
import type { InboundMedia, MediaProtocol } from "./mediaProtocol.ts"

/**
 * Our own browser test call, shaped like Vonage's framing so one pipeline serves both.
 *
 * Audio, both ways: binary WebSocket messages of mono PCM16, little-endian, 16 kHz. The page may
 * send any length (an AudioWorklet's 128-sample quanta are fine); the server sends 20 ms packets
 * of 320 samples (640 bytes) and the page plays them in order, queued.
 *
 * Control: JSON text messages.
 *   page → server  {"event":"start","parameters":{…string values…}}  first message; parameters optional
 *                  {"event":"played","name":"…"}   the page has played every packet received before
 *                                                 the mark of that name (or dropped it on a clear)
 *                  {"event":"dtmf","digit":"5"}    a key on the page's keypad
 *                  {"event":"stop"}                the user hung up (closing the socket also ends the call)
 *   server → page  {"event":"mark","name":"…"}     answer with "played" once the audio before it has played
 *                  {"event":"clear"}               drop all queued audio now, and answer every pending mark
 */
const PACKET_SAMPLES = 320

export const browserMediaProtocol = (): MediaProtocol => {
  const receive = (message: string | Uint8Array): ReadonlyArray<InboundMedia> => {
    if (typeof message !== "string") return linear16Audio(message)
    const json = jsonObject(message)
    switch (stringField(json, "event")) {
      case "start":
        return [{
          _tag: "Started",
          streamId: null,
          callId: null,
          parameters: stringEntries(objectField(json, "parameters"))
        }]
      case "played":
        return played(stringField(json, "name"))
      case "dtmf":
        return dtmf(stringField(json, "digit"))
      case "stop":
        return [{ _tag: "Stopped" }]
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
      mark: (name) => JSON.stringify({ event: "mark", name }),
      clear: () => JSON.stringify({ event: "clear" })
    })
  }
}
