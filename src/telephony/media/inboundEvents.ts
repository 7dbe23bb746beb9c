import { type JsonObject, objectField, pcmFromLinear16, pcmFromMuLawBase64, stringField } from "./mediaFrames.ts"
import type { InboundMedia } from "./mediaProtocol.ts"

/**
 * A JSON `media` message's base64 μ-law audio (Twilio, Telnyx, Plivo), when it is the caller's:
 * with both tracks streamed, "outbound" is our own audio coming back.
 */
export const callerMuLawAudio = (json: JsonObject | null): ReadonlyArray<InboundMedia> => {
  const body = objectField(json, "media")
  const track = stringField(body, "track")
  const payload = stringField(body, "payload")
  if (payload === null || (track !== null && track !== "inbound")) return []
  const pcm = pcmFromMuLawBase64(payload)
  return pcm.length === 0 ? [] : [{ _tag: "Audio", pcm }]
}

/** A binary message of little-endian PCM16 (Vonage, the browser). */
export const linear16Audio = (bytes: Uint8Array): ReadonlyArray<InboundMedia> => {
  const pcm = pcmFromLinear16(bytes)
  return pcm.length === 0 ? [] : [{ _tag: "Audio", pcm }]
}

/** A mark came back; a message without its name says nothing. */
export const played = (name: string | null): ReadonlyArray<InboundMedia> =>
  name === null ? [] : [{ _tag: "Played", name }]

/** A key pressed; a message without its digit says nothing. */
export const dtmf = (digit: string | null): ReadonlyArray<InboundMedia> =>
  digit === null ? [] : [{ _tag: "Dtmf", digit }]
