import { realPowerSpectrumOfSize } from "../audio/fft.ts"

/**
 * Whisper's log-mel spectrogram, as Hugging Face's `WhisperFeatureExtractor` computes it
 * (`_np_extract_fbank_features` / `_torch_extract_fbank_features`): 16 kHz audio, 400-sample
 * periodic Hann frames every 160 samples, centred (the audio reflected by 200 samples at each
 * end), the power spectrum through 80 Slaney mel filters from 0 to 8 kHz, log10 of it clamped at
 * 1e-10, floored 8 below its maximum, then (x + 4) / 4. The last frame is dropped, so `n` samples
 * give n / 160 frames: 8 s give the 80 × 800 that smart-turn v3 reads.
 */
export const WHISPER_SAMPLE_RATE = 16_000
export const MEL_BANDS = 80
const FRAME = 400
const HOP = 160
const BINS = FRAME / 2 + 1
const HALF = FRAME / 2

const hzToMel = (hz: number) => (hz < 1000 ? (3 * hz) / 200 : 15 + (Math.log(hz / 1000) * 27) / Math.log(6.4))
const melToHz = (mel: number) => (mel < 15 ? (200 * mel) / 3 : 1000 * Math.exp((Math.log(6.4) / 27) * (mel - 15)))

/** The edges of the 80 triangles: band `m` rises from edge m, peaks at m + 1 and falls to m + 2. */
const edgesHz = (() => {
  const top = hzToMel(WHISPER_SAMPLE_RATE / 2)
  return Float64Array.from({ length: MEL_BANDS + 2 }, (_, i) => melToHz((top * i) / (MEL_BANDS + 1)))
})()

/** Where each band peaks, in Hz. */
export const melBandCentresHz = (): Float64Array => edgesHz.slice(1, MEL_BANDS + 1)

/**
 * Band m's Slaney-normalised weights (each band's area is constant) on the FFT bins it covers,
 * `first` onwards: a band spans a few bins, so the rest are skipped.
 */
const filters = Array.from({ length: MEL_BANDS }, (_, m) => {
  const [low, peak, high] = [edgesHz[m]!, edgesHz[m + 1]!, edgesHz[m + 2]!]
  const area = 2 / (high - low)
  const weights = Array.from({ length: BINS }, (_, k) => {
    const hz = (k * WHISPER_SAMPLE_RATE) / FRAME
    return Math.max(0, Math.min((hz - low) / (peak - low), (high - hz) / (high - peak))) * area
  })
  const first = Math.max(0, weights.findIndex((weight) => weight > 0))
  const end = BINS - [...weights].reverse().findIndex((weight) => weight > 0)
  return { first, weights: Float64Array.from(weights.slice(first, end)) }
})

const hann = Float64Array.from({ length: FRAME }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / FRAME))
const powerSpectrum = realPowerSpectrumOfSize(FRAME)

/** numpy's "reflect" padding: the sample `i` places before the start is the one `i` places after it. */
const reflected = (audio: Float32Array, index: number) => {
  const last = audio.length - 1
  if (index < 0) return audio[-index] ?? 0
  if (index > last) return audio[2 * last - index] ?? 0
  return audio[index]!
}

export interface LogMel {
  readonly frames: number
  /** Band-major, as the model's (80, frames) input: `data[band * frames + frame]`. */
  readonly data: Float32Array
}

/** The features of 16 kHz mono audio in [-1, 1] (at least 201 samples, for the reflection). */
export const whisperLogMel = (audio: Float32Array): LogMel => {
  const frames = Math.floor(audio.length / HOP)
  const data = new Float32Array(MEL_BANDS * frames)
  const windowed = new Float64Array(FRAME)
  let max = Number.NEGATIVE_INFINITY
  for (let t = 0; t < frames; t++) {
    const start = t * HOP - HALF
    for (let i = 0; i < FRAME; i++) windowed[i] = reflected(audio, start + i) * hann[i]!
    const power = powerSpectrum(windowed)
    for (let m = 0; m < MEL_BANDS; m++) {
      const { first, weights } = filters[m]!
      let energy = 0
      for (let i = 0; i < weights.length; i++) energy += weights[i]! * power[first + i]!
      const log = Math.log10(Math.max(energy, 1e-10))
      data[m * frames + t] = log
      if (log > max) max = log
    }
  }
  for (let i = 0; i < data.length; i++) data[i] = (Math.max(data[i]!, max - 8) + 4) / 4
  return { frames, data }
}
