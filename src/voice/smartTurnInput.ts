import { resample } from "../audio/resample.ts"
import { WHISPER_SAMPLE_RATE, whisperLogMel } from "./whisperFeatures.ts"

/** Smart-turn v3 reads the last 8 s of the caller's audio. */
export const SMART_TURN_SECONDS = 8
const SAMPLES = SMART_TURN_SECONDS * WHISPER_SAMPLE_RATE

/**
 * Smart-turn v3's `input_features` (1 × 80 × 800, band-major) for the caller's recent audio, as
 * its reference `predict_endpoint` prepares them (pipecat-ai/smart-turn `inference.py` with
 * `audio_utils.truncate_audio_to_last_n_seconds`; found through the code search, a v3.1 fork
 * wonderfulcx/smart-turn): the last 8 s at 16 kHz, shorter audio padded with zeros *before* it,
 * then `WhisperFeatureExtractor(chunk_length=8)` with `do_normalize=True`, which scales the
 * padded waveform to zero mean and unit variance (+1e-7) before the log-mel.
 */
export const smartTurnFeatures = (pcm: Int16Array, sampleRate: number): Float32Array => {
  const kept = pcm.subarray(Math.max(0, pcm.length - SMART_TURN_SECONDS * sampleRate))
  const floats = Float32Array.from(kept, (sample) => sample / 32768)
  const wide = sampleRate === WHISPER_SAMPLE_RATE ? floats : resample(floats, sampleRate, WHISPER_SAMPLE_RATE)
  const audio = new Float32Array(SAMPLES)
  const tail = wide.subarray(Math.max(0, wide.length - SAMPLES))
  audio.set(tail, SAMPLES - tail.length)
  normalize(audio)
  return whisperLogMel(audio).data
}

const normalize = (audio: Float32Array) => {
  let sum = 0
  for (const sample of audio) sum += sample
  const mean = sum / audio.length
  let squares = 0
  for (const sample of audio) squares += (sample - mean) ** 2
  const scale = 1 / Math.sqrt(squares / audio.length + 1e-7)
  for (let i = 0; i < audio.length; i++) audio[i] = (audio[i]! - mean) * scale
}
