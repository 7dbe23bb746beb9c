import { encodeMuLaw } from "./g711.ts"

/** Samples in [-1, 1] to 16-bit integers, rounded and clipped. */
export const toInt16 = (samples: Float32Array): Int16Array => {
  const out = new Int16Array(samples.length)
  for (let i = 0; i < samples.length; i++) {
    out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32768)))
  }
  return out
}

/** 16-bit little-endian PCM bytes (what Vonage and most STT/TTS APIs call linear16). */
export const toPcm16le = (samples: Float32Array): Uint8Array => {
  const ints = toInt16(samples)
  const out = new Uint8Array(ints.length * 2)
  const view = new DataView(out.buffer)
  for (let i = 0; i < ints.length; i++) view.setInt16(i * 2, ints[i]!, true)
  return out
}

/** μ-law bytes (what Twilio, Plivo and Telnyx media streams carry). */
export const toMuLaw = (samples: Float32Array): Uint8Array => encodeMuLaw(toInt16(samples))
