import { describe, expect, it } from "vitest"
import { LOOKBACK_MS, voiceEnd } from "../src/voice/voiceEnd.ts"

const RATE = 8000

/** A steady tone at `amplitude` (peak) lasting `ms`: voice for the level meter. */
const tone = (ms: number, amplitude: number) =>
  Int16Array.from(
    { length: (RATE * ms) / 1000 },
    (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 300 * i) / RATE))
  )

/** Deterministic white noise of peak `amplitude`. */
const noise = (ms: number, amplitude: number) => {
  let seed = 99
  return Int16Array.from({ length: (RATE * ms) / 1000 }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return Math.round((seed / 2147483648 - 0.5) * 2 * amplitude)
  })
}

const silence = (ms: number) => new Int16Array((RATE * ms) / 1000)

/** Pushes the parts in 20 ms frames, as the detector is fed. */
const fed = (...parts: ReadonlyArray<Int16Array>) => {
  const ends = voiceEnd(RATE)
  for (const part of parts) {
    for (let at = 0; at < part.length; at += RATE / 50) ends.push(part.subarray(at, at + RATE / 50))
  }
  return ends
}

describe("where the caller's voice stopped", () => {
  it("dates a detector's late end back to the last block of voice", () => {
    // Voice until 1000 ms, a quieter trailing sound to 1030 ms, then silence; the model said 1064.
    const ends = fed(silence(200), tone(800, 12_000), tone(30, 2_000), silence(400))
    expect(ends.refine(1064, 200, 1300)).toBe(1030)
  })

  it("keeps the detector's date when the voice went on up to it", () => {
    const ends = fed(silence(200), tone(870, 12_000), silence(400))
    expect(ends.refine(1064, 200, 1300)).toBe(1064)
  })

  it("does not take steady background noise for a trailing word", () => {
    // Noise at about -36 dBFS under the speech and after it: the voice ended at 1000 ms.
    const background = noise(1400, 1_000)
    const speech = tone(800, 12_000)
    const line = background.slice()
    speech.forEach((sample, i) => (line[(RATE * 200) / 1000 + i] = sample + line[(RATE * 200) / 1000 + i]!))
    const ends = fed(line)
    expect(ends.refine(1064, 200, 1300)).toBe(1000)
  })

  it("moves an end back no further than its lookback, nor before the speech began", () => {
    const longAgo = fed(silence(200), tone(500, 12_000), silence(700))
    expect(longAgo.refine(1000, 200, 1300)).toBe(1000 - LOOKBACK_MS)
    const short = fed(silence(960), tone(20, 12_000), silence(400))
    expect(short.refine(1024, 990, 1300)).toBe(990)
  })

  it("reads the silence only up to what the detector had scored", () => {
    // Noise that starts after the detector's window must not change an end already dated.
    const ends = fed(silence(200), tone(800, 12_000), tone(30, 2_000), silence(100), noise(300, 8_000))
    expect(ends.refine(1064, 200, 1100)).toBe(1030)
  })
})
