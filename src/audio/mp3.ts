import { AudioRejected } from "./audioRejected.ts"
import { type DecodedAudio, durationMsOf, SUPPORTED_SAMPLE_RATES } from "./decodedAudio.ts"

/** Bytes handed to the decoder at a time; between slices the caller may yield to other work. */
const SLICE_BYTES = 16 * 1024

/** Where the first MPEG frame would start: after an ID3v2 tag when there is one. */
const firstFrameAt = (bytes: Uint8Array) => {
  if (bytes.length >= 10 && bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33) {
    // ID3v2 sizes are "syncsafe": 7 bits per byte.
    const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) |
      (bytes[9]! & 0x7f)
    return 10 + size + (bytes[5]! & 0x10 ? 10 : 0)
  }
  return 0
}

const isFrameSync = (bytes: Uint8Array, at: number) =>
  at + 4 <= bytes.length && bytes[at] === 0xff && (bytes[at + 1]! & 0xe0) === 0xe0

/** An MP3 starts with an ID3v2 tag or an MPEG audio frame header. */
export const isMp3 = (bytes: Uint8Array) => isFrameSync(bytes, firstFrameAt(bytes))

interface Mp3Limits {
  readonly maxDurationMs: number
  /** Called between slices, so a long decode does not hold the event loop. */
  readonly pause: () => Promise<void>
}

const joined = (parts: ReadonlyArray<Float32Array>, length: number) => {
  const out = new Float32Array(length)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/**
 * Decodes an MP3 (MPEG-1/2 Layer III, also I and II) with libmpg123 compiled to WebAssembly:
 * no native build and no external program. Stops, refusing the clip, as soon as the decoded
 * audio passes `maxDurationMs`.
 */
export const decodeMp3 = async (bytes: Uint8Array, limits: Mp3Limits): Promise<DecodedAudio> => {
  const start = firstFrameAt(bytes)
  if (!isFrameSync(bytes, start)) {
    throw new AudioRejected("audio_format_invalid", "The file is not an MP3 file (no MPEG audio frame header)")
  }
  const channels = (bytes[start + 3]! >> 6) === 3 ? 1 : 2
  // Loaded on the first MP3, not at start: the decoder's module carries libmpg123's WebAssembly,
  // which a process that never receives an MP3 clip should not hold.
  const { MPEGDecoder } = await import("mpg123-decoder")
  const decoder = new MPEGDecoder()
  try {
    await decoder.ready
    const parts: Array<Float32Array> = []
    let frames = 0
    let sampleRate = 0
    for (let at = start; at < bytes.length; at += SLICE_BYTES) {
      const decoded = decoder.decode(bytes.subarray(at, Math.min(bytes.length, at + SLICE_BYTES)))
      if (decoded.samplesDecoded > 0) {
        if (sampleRate !== 0 && decoded.sampleRate !== sampleRate) {
          throw new AudioRejected("audio_format_invalid", "The MP3 file changes its sample rate midway")
        }
        sampleRate = decoded.sampleRate
        const mono = new Float32Array(decoded.samplesDecoded)
        const count = decoded.channelData.length
        for (const channel of decoded.channelData) {
          for (let i = 0; i < mono.length; i++) mono[i]! += channel[i]! / count
        }
        parts.push(mono)
        frames += mono.length
        if (durationMsOf(frames, sampleRate) > limits.maxDurationMs) {
          throw new AudioRejected(
            "audio_too_long",
            `The clip is longer than the ${limits.maxDurationMs / 1000}-second limit`
          )
        }
      }
      await limits.pause()
    }
    if (frames === 0) throw new AudioRejected("audio_format_invalid", "The MP3 file holds no decodable audio")
    if (!SUPPORTED_SAMPLE_RATES.includes(sampleRate)) {
      throw new AudioRejected("audio_sample_rate_unsupported", `A sample rate of ${sampleRate} Hz is not supported`)
    }
    return { samples: joined(parts, frames), sampleRate, channels, format: "mp3" }
  } finally {
    decoder.free()
  }
}
