import { describe, expect, it } from "vitest"
import { recentAudio } from "../src/voice/recentAudio.ts"

const ramp = (from: number, length: number) => Int16Array.from({ length }, (_, i) => from + i)

describe("recent line audio", () => {
  it("keeps everything until the window is full", () => {
    const audio = recentAudio(10, 1)
    audio.push(ramp(0, 4))
    audio.push(ramp(4, 3))
    expect(Array.from(audio.snapshot())).toEqual([0, 1, 2, 3, 4, 5, 6])
  })

  it("keeps only the last window, oldest first, across pushes that wrap around", () => {
    const audio = recentAudio(10, 1)
    for (let from = 0; from < 37; from += 6) audio.push(ramp(from, 6))
    expect(Array.from(audio.snapshot())).toEqual(Array.from(ramp(32, 10)))
  })

  it("keeps the end of a push longer than the window", () => {
    const audio = recentAudio(10, 1)
    audio.push(ramp(0, 3))
    audio.push(ramp(100, 25))
    expect(Array.from(audio.snapshot())).toEqual(Array.from(ramp(115, 10)))
  })
})
