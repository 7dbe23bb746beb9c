import { AudioRejected } from "./audioRejected.ts"
import { type DecodedAudio, durationMsOf, SUPPORTED_SAMPLE_RATES } from "./decodedAudio.ts"
import { A_LAW_DECODE, MU_LAW_DECODE } from "./g711.ts"

const FORMAT_PCM = 1
const FORMAT_FLOAT = 3
const FORMAT_ALAW = 6
const FORMAT_MULAW = 7
const FORMAT_EXTENSIBLE = 0xfffe

type Encoding = "pcm" | "float" | "alaw" | "mulaw"

interface WavLayout {
  readonly encoding: Encoding
  readonly sampleRate: number
  readonly channels: number
  readonly bitsPerSample: number
  readonly dataOffset: number
  /** Whole frames (one sample per channel) in the data chunk. */
  readonly frames: number
}

const ascii = (bytes: Uint8Array, at: number) =>
  String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!)

export const isWav = (bytes: Uint8Array) =>
  bytes.length >= 12 && ascii(bytes, 0) === "RIFF" && ascii(bytes, 8) === "WAVE"

const encodingOf = (format: number, bits: number): Encoding | undefined => {
  if (format === FORMAT_PCM && [8, 16, 24, 32].includes(bits)) return "pcm"
  if (format === FORMAT_FLOAT && bits === 32) return "float"
  if (format === FORMAT_ALAW && bits === 8) return "alaw"
  if (format === FORMAT_MULAW && bits === 8) return "mulaw"
  return undefined
}

/**
 * Reads the RIFF chunks of a WAV file up to its data chunk and checks that talkgraph can decode
 * it. A data size larger than the file (streamed WAVs write 0 or 0xFFFFFFFF) is read as "to the
 * end of the file".
 */
export const readWavLayout = (bytes: Uint8Array): WavLayout => {
  if (!isWav(bytes)) throw new AudioRejected("audio_format_invalid", "The file is not a WAV file (no RIFF/WAVE header)")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let format: { code: number; channels: number; sampleRate: number; blockAlign: number; bits: number } | undefined
  let at = 12
  while (at + 8 <= bytes.length) {
    const id = ascii(bytes, at)
    const size = view.getUint32(at + 4, true)
    const body = at + 8
    if (id === "fmt ") {
      if (size < 16 || body + 16 > bytes.length) {
        throw new AudioRejected("audio_format_invalid", "The WAV file's fmt chunk is truncated")
      }
      let code = view.getUint16(body, true)
      // WAVE_FORMAT_EXTENSIBLE carries the real format in the first two bytes of its sub-format GUID.
      if (code === FORMAT_EXTENSIBLE && size >= 40 && body + 26 <= bytes.length) code = view.getUint16(body + 24, true)
      format = {
        code,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        blockAlign: view.getUint16(body + 12, true),
        bits: view.getUint16(body + 14, true)
      }
    } else if (id === "data") {
      if (!format) throw new AudioRejected("audio_format_invalid", "The WAV file has its data before its fmt chunk")
      const encoding = encodingOf(format.code, format.bits)
      if (!encoding) {
        throw new AudioRejected(
          "audio_format_unsupported",
          `WAV format ${format.code} with ${format.bits}-bit samples is not supported; use PCM (8, 16, 24 or 32-bit), 32-bit float, μ-law or A-law`
        )
      }
      if (format.channels < 1 || format.channels > 8) {
        throw new AudioRejected("audio_format_invalid", `The WAV file declares ${format.channels} channels`)
      }
      if (!SUPPORTED_SAMPLE_RATES.includes(format.sampleRate)) {
        throw new AudioRejected(
          "audio_sample_rate_unsupported",
          `A sample rate of ${format.sampleRate} Hz is not supported; use one of ${
            SUPPORTED_SAMPLE_RATES.join(", ")
          } Hz`
        )
      }
      const frameBytes = (format.bits / 8) * format.channels
      const available = Math.min(size === 0 ? Infinity : size, bytes.length - body)
      const frames = Math.floor(available / frameBytes)
      if (frames === 0) throw new AudioRejected("audio_empty", "The WAV file holds no audio")
      return {
        encoding,
        sampleRate: format.sampleRate,
        channels: format.channels,
        bitsPerSample: format.bits,
        dataOffset: body,
        frames
      }
    }
    at = body + size + (size % 2)
  }
  throw new AudioRejected("audio_format_invalid", "The WAV file has no data chunk")
}

const sampleReader = (view: DataView, layout: WavLayout): (offset: number) => number => {
  switch (layout.encoding) {
    case "alaw":
      return (offset) => A_LAW_DECODE[view.getUint8(offset)]! / 32768
    case "mulaw":
      return (offset) => MU_LAW_DECODE[view.getUint8(offset)]! / 32768
    case "float":
      return (offset) => Math.max(-1, Math.min(1, view.getFloat32(offset, true)))
    case "pcm":
      switch (layout.bitsPerSample) {
        case 8:
          return (offset) => (view.getUint8(offset) - 128) / 128
        case 16:
          return (offset) => view.getInt16(offset, true) / 32768
        case 24:
          return (offset) =>
            ((view.getUint8(offset + 2) << 24) | (view.getUint8(offset + 1) << 16) | (view.getUint8(offset) << 8)) /
            2147483648
        default:
          return (offset) => view.getInt32(offset, true) / 2147483648
      }
  }
}

/** The clip's length in milliseconds, from its header alone (so an overlong clip is refused before decoding). */
export const wavDurationMs = (layout: WavLayout) => durationMsOf(layout.frames, layout.sampleRate)

/** Decodes frames [from, to) of a WAV file into `samples` (mono: channels are averaged). */
export const decodeWavFrames = (
  bytes: Uint8Array,
  layout: WavLayout,
  samples: Float32Array,
  from: number,
  to: number
) => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const read = sampleReader(view, layout)
  const sampleBytes = layout.bitsPerSample / 8
  const frameBytes = sampleBytes * layout.channels
  for (let frame = from; frame < to; frame++) {
    const start = layout.dataOffset + frame * frameBytes
    let sum = 0
    for (let channel = 0; channel < layout.channels; channel++) sum += read(start + channel * sampleBytes)
    samples[frame] = sum / layout.channels
  }
}

/** What a decoded WAV file is described as, e.g. `wav/pcm16`. */
export const wavFormatName = (layout: WavLayout) =>
  `wav/${
    layout.encoding === "pcm" ? `pcm${layout.bitsPerSample}` : layout.encoding === "float" ? "float32" : layout.encoding
  }`

/** Decodes a WAV file to mono samples in one go (the service decodes in slices instead). */
export const decodeWav = (bytes: Uint8Array, layout: WavLayout = readWavLayout(bytes)): DecodedAudio => {
  const samples = new Float32Array(layout.frames)
  decodeWavFrames(bytes, layout, samples, 0, layout.frames)
  return {
    samples,
    sampleRate: layout.sampleRate,
    channels: layout.channels,
    format: wavFormatName(layout)
  }
}

/** Raw μ-law at 8 kHz mono, as telephony carriers send it (no header). */
export const decodeRawMuLaw = (bytes: Uint8Array): DecodedAudio => {
  if (bytes.length === 0) throw new AudioRejected("audio_empty", "The file holds no audio")
  if (isWav(bytes)) {
    throw new AudioRejected("audio_format_invalid", "The file is a WAV file, not raw μ-law; upload it as audio/wav")
  }
  const samples = new Float32Array(bytes.length)
  for (let i = 0; i < bytes.length; i++) samples[i] = MU_LAW_DECODE[bytes[i]!]! / 32768
  return { samples, sampleRate: 8000, channels: 1, format: "mulaw" }
}
