import { describe, expect, it } from "vitest"
import { resample } from "../src/audio/resample.ts"
import { streamingResampler } from "../src/audio/streamingResample.ts"

const signal = (length: number) =>
  Float32Array.from({ length }, (_, i) => 0.4 * Math.sin(i / 3.7) + 0.3 * Math.sin(i / 0.9) + 0.1 * Math.cos(i / 17))

const streamed = (input: Float32Array, from: number, to: number, pieces: ReadonlyArray<number>) => {
  const converter = streamingResampler(from, to)
  const out: Array<number> = []
  let at = 0
  for (let i = 0; at < input.length; i++) {
    const size = pieces[i % pieces.length]!
    out.push(...converter.push(input.subarray(at, at + size)))
    at += size
  }
  out.push(...converter.flush())
  return Float32Array.from(out)
}

describe("streaming resampler", () => {
  it.each([
    [24000, 8000],
    [24000, 16000],
    [22050, 8000],
    [22050, 16000],
    [8000, 16000],
    [16000, 16000]
  ])("%i → %i Hz in uneven pieces equals the whole-buffer conversion", (from, to) => {
    const input = signal(4801)
    const whole = resample(input, from, to)
    expect(streamed(input, from, to, [1, 479, 2, 960, 37])).toEqual(whole)
    expect(streamed(input, from, to, [4801])).toEqual(whole)
  })

  it("keeps only the input it still needs", () => {
    const converter = streamingResampler(24000, 8000)
    let out = 0
    for (let i = 0; i < 1000; i++) out += converter.push(signal(480)).length
    out += converter.flush().length
    expect(out).toBe((1000 * 480) / 3)
  })
})
