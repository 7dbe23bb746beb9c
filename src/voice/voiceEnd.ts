/**
 * Where the caller's voice really stopped. Silero's probability fades over a window or two after
 * the last audible sound, so the first window it calls silence starts 36–84 ms (16 kHz) and 36–112
 * ms (8 kHz) after the voice on the eSpeak lines bench/voiceCalls.ts speaks, measured on the
 * detector alone: endpointing counted from there answers that much later than the silence the
 * caller actually left, and the caller hears it.
 *
 * This keeps the level of the line's last seconds in 10 ms blocks, and dates an end back to the
 * last block before it that was still voice: louder than 30 dB under the speech before it and twice
 * the silence after it (so steady background noise is not taken for a trailing word). It looks back
 * at most `LOOKBACK_MS`, never before the speech began, and never dates an end later than the
 * detector did.
 *
 * Pure: the detector pushes every sample it scores, in order, and asks about ends it reports.
 */
export interface VoiceEnd {
  readonly push: (pcm: Int16Array) => void
  /**
   * The refined end of speech the detector dated at `atMs` (audio clock), which began at `sinceMs`;
   * `untilMs`: the end of the audio the detector had scored (the silence after is read up to there).
   */
  readonly refine: (atMs: number, sinceMs: number, untilMs: number) => number
}

const BLOCK_MS = 10
const KEPT_MS = 3000
/** How far back an end may move: three windows, most of the detector's lag measured above. */
export const LOOKBACK_MS = 96
/** The speech the end's loudness is compared with: the second before it. */
const SPEECH_SPAN_MS = 1000
/** The silence that ended the speech, read after the detector's end. */
const SILENCE_SPAN_MS = 200
/** Voice is within 30 dB of the speech's loudest block. */
const BELOW_PEAK = 10 ** (-30 / 20)
/** …and at least twice (+6 dB) the silence's level. */
const ABOVE_SILENCE = 2

export const voiceEnd = (sampleRate: number): VoiceEnd => {
  const blockSamples = (sampleRate * BLOCK_MS) / 1000
  const levels = new Float64Array(KEPT_MS / BLOCK_MS)
  /** Blocks completed so far; block `b` covers [b·10, b·10 + 10) ms of the audio clock. */
  let blocks = 0
  let partialSquares = 0
  let partialSamples = 0

  const levelOf = (block: number) => levels[block % levels.length]!
  const oldestKept = () => Math.max(0, blocks - levels.length)

  return {
    push: (pcm) => {
      for (let i = 0; i < pcm.length; i++) {
        const sample = pcm[i]!
        partialSquares += sample * sample
        if (++partialSamples === blockSamples) {
          levels[blocks++ % levels.length] = Math.sqrt(partialSquares / blockSamples)
          partialSquares = 0
          partialSamples = 0
        }
      }
    },
    refine: (atMs, sinceMs, untilMs) => {
      const end = Math.floor(atMs / BLOCK_MS)
      const lowest = Math.max(atMs - LOOKBACK_MS, sinceMs)
      const earliest = Math.ceil(lowest / BLOCK_MS)
      // Detection running more than the kept audio behind the line: nothing to refine the end with.
      if (end > blocks || earliest >= end || earliest < oldestKept()) return atMs
      let peak = 0
      for (let b = Math.max(oldestKept(), end - SPEECH_SPAN_MS / BLOCK_MS); b < end; b++) {
        peak = Math.max(peak, levelOf(b))
      }
      let silence = 0
      const silenceEnd = Math.min(blocks, Math.floor(untilMs / BLOCK_MS), end + SILENCE_SPAN_MS / BLOCK_MS)
      for (let b = end; b < silenceEnd; b++) silence += levelOf(b)
      const silenceLevel = silenceEnd > end ? silence / (silenceEnd - end) : 0
      const voice = Math.max(peak * BELOW_PEAK, silenceLevel * ABOVE_SILENCE)
      for (let b = end - 1; b >= earliest; b--) {
        // Voice up to the block the detector's end falls in: nothing says it stopped any sooner.
        if (levelOf(b) >= voice) return b === end - 1 ? atMs : (b + 1) * BLOCK_MS
      }
      return lowest
    }
  }
}
