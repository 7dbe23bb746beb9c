import { describe, expect, it } from "vitest"
import { pcm16Resampler } from "../web/src/editor/pcm16Resampler.ts"

const tone = (frequency: number, rate: number, seconds: number, amplitude = 0.5) =>
  Float32Array.from(
    { length: Math.round(rate * seconds) },
    (_, i) => amplitude * Math.sin((2 * Math.PI * frequency * i) / rate)
  )

/** The tone's level in `pcm` at `frequency` (a single-bin DFT), relative to full scale. */
const levelAt = (pcm: Int16Array, frequency: number, rate: number) => {
  let re = 0
  let im = 0
  pcm.forEach((sample, i) => {
    re += sample * Math.cos((2 * Math.PI * frequency * i) / rate)
    im += sample * Math.sin((2 * Math.PI * frequency * i) / rate)
  })
  return (2 * Math.hypot(re, im)) / pcm.length / 32768
}

/** The microphone's blocks as a browser delivers them: 128 samples at a time (an AudioWorklet's quantum). */
const inBlocks = (samples: Float32Array, resample: (block: Float32Array) => Int16Array) => {
  const out: Array<number> = []
  for (let at = 0; at < samples.length; at += 128) out.push(...resample(samples.subarray(at, at + 128)))
  return Int16Array.from(out)
}

describe("the console's microphone resampler", () => {
  it("turns a 48 kHz microphone into 16 kHz PCM16, block by block, keeping speech-band tones at their pitch and level", () => {
    const pcm = inBlocks(tone(440, 48000, 1), pcm16Resampler(48000))
    expect(pcm.length).toBe(16000)
    expect(levelAt(pcm, 440, 16000)).toBeGreaterThan(0.48)
    expect(levelAt(pcm, 440, 16000)).toBeLessThan(0.51)
  })

  it("handles a 44.1 kHz microphone (an output sample spanning blocks) without losing or adding time", () => {
    const pcm = inBlocks(tone(1000, 44100, 2), pcm16Resampler(44100))
    expect(Math.abs(pcm.length - 32000)).toBeLessThanOrEqual(1)
    expect(levelAt(pcm, 1000, 16000)).toBeGreaterThan(0.45)
  })

  it("weakens what lies above 8 kHz instead of folding it into the speech band at full level", () => {
    // 14 kHz at 48 kHz would alias to 2 kHz at 16 kHz; averaging each output's span damps it.
    const pcm = inBlocks(tone(14000, 48000, 1), pcm16Resampler(48000))
    expect(levelAt(pcm, 2000, 16000)).toBeLessThan(0.2)
  })

  it("clips beyond full scale rather than wrapping around", () => {
    const pcm = pcm16Resampler(16000)(Float32Array.from([1.5, -1.5, 1, -1, 0]))
    expect([...pcm]).toEqual([32767, -32768, 32767, -32768, 0])
  })
})
