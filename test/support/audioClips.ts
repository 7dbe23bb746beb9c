import { A_LAW_DECODE, encodeMuLaw } from "../../src/audio/g711.ts"

export type WavEncoding = "pcm8" | "pcm16" | "pcm24" | "pcm32" | "float32" | "mulaw" | "alaw"

/** A sine tone as samples in [-1, 1]. */
export const sine = (frequency: number, sampleRate: number, seconds: number, amplitude = 0.5) =>
  Float32Array.from(
    { length: Math.round(sampleRate * seconds) },
    (_, i) => amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate)
  )

const aLawByte = (sample: number) => {
  let best = 0
  for (let byte = 1; byte < 256; byte++) {
    if (Math.abs(A_LAW_DECODE[byte]! - sample) < Math.abs(A_LAW_DECODE[best]! - sample)) best = byte
  }
  return best
}

const FORMAT_CODES: Record<WavEncoding, [code: number, bits: number]> = {
  pcm8: [1, 8],
  pcm16: [1, 16],
  pcm24: [1, 24],
  pcm32: [1, 32],
  float32: [3, 32],
  mulaw: [7, 8],
  alaw: [6, 8]
}

/** A WAV file of `samples` (the same signal on every channel). */
export const wavFile = (
  samples: Float32Array,
  sampleRate: number,
  options: { encoding?: WavEncoding; channels?: number } = {}
) => {
  const encoding = options.encoding ?? "pcm16"
  const channels = options.channels ?? 1
  const [code, bits] = FORMAT_CODES[encoding]
  const bytesPerSample = bits / 8
  const dataBytes = samples.length * channels * bytesPerSample
  const out = new Uint8Array(44 + dataBytes)
  const view = new DataView(out.buffer)
  const text = (at: number, value: string) => [...value].forEach((char, i) => view.setUint8(at + i, char.charCodeAt(0)))
  text(0, "RIFF")
  view.setUint32(4, 36 + dataBytes, true)
  text(8, "WAVE")
  text(12, "fmt ")
  view.setUint32(16, 16, true)
  view.setUint16(20, code, true)
  view.setUint16(22, channels, true)
  view.setUint32(24, sampleRate, true)
  view.setUint32(28, sampleRate * channels * bytesPerSample, true)
  view.setUint16(32, channels * bytesPerSample, true)
  view.setUint16(34, bits, true)
  text(36, "data")
  view.setUint32(40, dataBytes, true)
  let at = 44
  const int16 = (value: number) => Math.max(-32768, Math.min(32767, Math.round(value * 32768)))
  for (const sample of samples) {
    for (let channel = 0; channel < channels; channel++) {
      switch (encoding) {
        case "pcm8":
          view.setUint8(at, Math.max(0, Math.min(255, Math.round(sample * 128 + 128))))
          break
        case "pcm16":
          view.setInt16(at, int16(sample), true)
          break
        case "pcm24": {
          const value = Math.max(-8388608, Math.min(8388607, Math.round(sample * 8388608)))
          view.setUint8(at, value & 0xff)
          view.setUint8(at + 1, (value >> 8) & 0xff)
          view.setUint8(at + 2, (value >> 16) & 0xff)
          break
        }
        case "pcm32":
          view.setInt32(at, Math.max(-2147483648, Math.min(2147483647, Math.round(sample * 2147483648))), true)
          break
        case "float32":
          view.setFloat32(at, sample, true)
          break
        case "mulaw":
          view.setUint8(at, encodeMuLaw(Int16Array.of(int16(sample)))[0]!)
          break
        case "alaw":
          view.setUint8(at, aLawByte(int16(sample)))
          break
      }
      at += bytesPerSample
    }
  }
  return out
}

/** Raw 8 kHz μ-law bytes of `samples`. */
export const rawMuLaw = (samples: Float32Array) =>
  encodeMuLaw(Int16Array.from(samples, (sample) => Math.max(-32768, Math.min(32767, Math.round(sample * 32768)))))

/**
 * An MP3 of silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz, mono): a zeroed side-info
 * block decodes to 1152 samples of silence per frame. Enough to exercise the real decoder
 * without shipping an encoder or a binary fixture.
 */
export const silentMp3 = (seconds: number) => {
  const frameBytes = 417
  const frames = Math.ceil((seconds * 44100) / 1152)
  const out = new Uint8Array(frames * frameBytes)
  for (let frame = 0; frame < frames; frame++) out.set([0xff, 0xfb, 0x90, 0xc0], frame * frameBytes)
  return out
}
