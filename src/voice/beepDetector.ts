import { goertzelCoefficient, goertzelPower } from "../audio/goertzel.ts"

/**
 * An answering machine's beep: one steady tone, somewhere between 400 and 2000 Hz, held for at
 * least ~150 ms. Audio is cut into 32 ms blocks; in each, Goertzel power is measured on a 20 Hz grid
 * and the block is tonal when the strongest frequency alone carries most of its energy. Speech
 * spreads its energy over harmonics and formants and glides in pitch; noise spreads it everywhere;
 * so a run of tonal blocks on the same frequency is the beep. It is reported when the tone stops
 * (the message may start then), or once it has lasted `maxToneMs` (some machines beep long).
 */
const BLOCK_MS = 32
const LOWEST_HZ = 400
const HIGHEST_HZ = 2000
const GRID_HZ = 20
/** A grid point sits at most 10 Hz from the tone: a third of a 31 Hz bin, about 70 % of its power. */
const TONE_SHARE = 0.5
/** Blocks on the same tone drift by less than this (grid step plus leakage). */
const SAME_TONE_HZ = 45
/** About -45 dBFS: quieter blocks are line noise, whatever their spectrum. */
const MIN_RMS = 0.0056

export interface BeepSettings {
  /** The shortest tone that counts as a beep. */
  readonly minToneMs: number
  /** A tone this long is reported without waiting for its end. */
  readonly maxToneMs: number
}

export const defaultBeepSettings: BeepSettings = { minToneMs: 160, maxToneMs: 1500 }

export interface Beep {
  /** Milliseconds from the first sample pushed. */
  readonly startMs: number
  readonly endMs: number
  readonly frequencyHz: number
}

export interface BeepDetector {
  /** Audio in order; returns the beep when one has just been heard. */
  readonly push: (pcm: Int16Array) => Beep | null
}

export const beepDetector = (sampleRate: number, settings: BeepSettings = defaultBeepSettings): BeepDetector => {
  const blockSize = Math.round((sampleRate * BLOCK_MS) / 1000)
  const blockMs = (blockSize * 1000) / sampleRate
  const grid: Array<{ frequency: number; coefficient: number }> = []
  for (let frequency = LOWEST_HZ; frequency <= Math.min(HIGHEST_HZ, sampleRate / 2 - GRID_HZ); frequency += GRID_HZ) {
    grid.push({ frequency, coefficient: goertzelCoefficient(frequency, sampleRate) })
  }
  const block = new Float64Array(blockSize)
  let filled = 0
  let blocks = 0
  let tone: { startBlock: number; blocks: number; frequency: number; reported: boolean } | null = null

  /** The block's tone, or null when it has none. */
  const toneOf = (): number | null => {
    let energy = 0
    for (const sample of block) energy += sample * sample
    if (Math.sqrt(energy / blockSize) < MIN_RMS) return null
    let best = 0
    let frequency = 0
    for (const point of grid) {
      const power = goertzelPower(block, point.coefficient)
      if (power > best) {
        best = power
        frequency = point.frequency
      }
    }
    // A pure tone's Goertzel power is N/2 times its energy in the block.
    return best / ((blockSize / 2) * energy) >= TONE_SHARE ? frequency : null
  }

  const judgeBlock = (): Beep | null => {
    const frequency = toneOf()
    const index = blocks++
    const current = tone
    if (frequency !== null && current !== null && Math.abs(frequency - current.frequency) <= SAME_TONE_HZ) {
      current.blocks++
      if (!current.reported && current.blocks * blockMs >= settings.maxToneMs) {
        current.reported = true
        return beepOf(current)
      }
      return null
    }
    // The tone (if any) ended at this block.
    const ended = current !== null && !current.reported && current.blocks * blockMs >= settings.minToneMs
      ? beepOf(current)
      : null
    tone = frequency === null ? null : { startBlock: index, blocks: 1, frequency, reported: false }
    return ended
  }

  const beepOf = (run: { startBlock: number; blocks: number; frequency: number }): Beep => ({
    startMs: run.startBlock * blockMs,
    endMs: (run.startBlock + run.blocks) * blockMs,
    frequencyHz: run.frequency
  })

  return {
    push: (pcm) => {
      let heard: Beep | null = null
      for (const sample of pcm) {
        block[filled++] = sample / 32768
        if (filled === blockSize) {
          filled = 0
          heard = judgeBlock() ?? heard
        }
      }
      return heard
    }
  }
}
