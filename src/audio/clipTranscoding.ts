import { AudioRejected } from "./audioRejected.ts"
import { type DecodedAudio, durationMsOf } from "./decodedAudio.ts"
import { decodeMp3, isMp3 } from "./mp3.ts"
import { resampler } from "./resample.ts"
import { toMuLaw, toPcm16le } from "./sampleFormats.ts"
import { decodeRawMuLaw, decodeWavFrames, isWav, readWavLayout, wavDurationMs, wavFormatName } from "./wav.ts"

/** What the upload URL was issued for. */
export type ClipKind = "wav" | "mp3" | "mulaw"

interface ClipLimits {
  readonly maxDurationMs: number
  /** Called between slices of work, so a long clip does not hold the event loop. */
  readonly pause: () => Promise<void>
}

/** A clip in the two forms calls play, decoded and converted once, when it is registered. */
export interface TranscodedClip {
  /** 8 kHz μ-law, no header: Twilio, Plivo and Telnyx media streams. */
  readonly ulaw8k: Uint8Array
  /** 16 kHz 16-bit little-endian PCM, no header: Vonage, browsers, STT/TTS. */
  readonly pcm16k: Uint8Array
  readonly durationMs: number
  readonly source: { readonly format: string; readonly sampleRate: number; readonly channels: number }
}

const OUTPUT_SLICE = 8_000
const INPUT_SLICE = 24_000

const tooLong = (durationMs: number, limitMs: number) =>
  new AudioRejected(
    "audio_too_long",
    `The clip is ${(durationMs / 1000).toFixed(1)} seconds long; the limit is ${limitMs / 1000} seconds`
  )

const decode = async (bytes: Uint8Array, kind: ClipKind, limits: ClipLimits): Promise<DecodedAudio> => {
  if (isWav(bytes)) {
    const layout = readWavLayout(bytes)
    const durationMs = wavDurationMs(layout)
    if (durationMs > limits.maxDurationMs) throw tooLong(durationMs, limits.maxDurationMs)
    const samples = new Float32Array(layout.frames)
    for (let from = 0; from < layout.frames; from += INPUT_SLICE) {
      decodeWavFrames(bytes, layout, samples, from, Math.min(layout.frames, from + INPUT_SLICE))
      await limits.pause()
    }
    return { samples, sampleRate: layout.sampleRate, channels: layout.channels, format: wavFormatName(layout) }
  }
  if (kind === "mulaw") {
    // Raw μ-law has no header to check: any byte is a sample. μ-law silence (0xFF) even looks like
    // an MPEG frame sync, so an MP3 is not sniffed here.
    const durationMs = durationMsOf(bytes.length, 8000)
    if (durationMs > limits.maxDurationMs) throw tooLong(durationMs, limits.maxDurationMs)
    return decodeRawMuLaw(bytes)
  }
  if (isMp3(bytes)) return decodeMp3(bytes, limits)
  throw new AudioRejected(
    "audio_format_invalid",
    kind === "wav"
      ? "The file is not a WAV file (no RIFF/WAVE header)"
      : "The file is not an MP3 file (no MPEG audio frame header)"
  )
}

const convert = async (decoded: DecodedAudio, toRate: number, limits: ClipLimits) => {
  const converter = resampler(decoded.samples, decoded.sampleRate, toRate)
  const out = new Float32Array(converter.outputLength)
  for (let start = 0; start < out.length; start += OUTPUT_SLICE) {
    converter.render(out, start, Math.min(out.length, start + OUTPUT_SLICE))
    await limits.pause()
  }
  return out
}

/** Decodes and checks a clip, then converts it to the formats calls play. */
export const transcodeClip = async (bytes: Uint8Array, kind: ClipKind, limits: ClipLimits): Promise<TranscodedClip> => {
  const decoded = await decode(bytes, kind, limits)
  const durationMs = durationMsOf(decoded.samples.length, decoded.sampleRate)
  if (durationMs > limits.maxDurationMs) throw tooLong(durationMs, limits.maxDurationMs)
  const ulaw8k = toMuLaw(await convert(decoded, 8000, limits))
  const pcm16k = toPcm16le(await convert(decoded, 16000, limits))
  return {
    ulaw8k,
    pcm16k,
    durationMs,
    source: { format: decoded.format, sampleRate: decoded.sampleRate, channels: decoded.channels }
  }
}
