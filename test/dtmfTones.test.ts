import { describe, expect, it } from "vitest"
import { dtmfFrequencies, dtmfTones } from "../src/audio/dtmfTones.ts"
import { encodeMuLaw, MU_LAW_DECODE } from "../src/audio/g711.ts"
import { decodeDtmf as decode } from "./support/dtmfDecoder.ts"

describe("send_dtmf tones", () => {
  it("use the Q.23 frequency pair of every key", () => {
    expect(dtmfFrequencies("1")).toEqual([697, 1209])
    expect(dtmfFrequencies("0")).toEqual([941, 1336])
    expect(dtmfFrequencies("#")).toEqual([941, 1477])
    expect(dtmfFrequencies("D")).toEqual([941, 1633])
    expect(dtmfFrequencies("x")).toBeNull()
  })

  for (const sampleRate of [8000, 16000]) {
    it(`decode back to the keys at ${sampleRate} Hz, through μ-law as a phone line carries them`, () => {
      const dial = "0123456789*#ABCD"
      const pcm = dtmfTones(dial, sampleRate)
      expect(decode(pcm, sampleRate)).toBe(dial)
      const line = Int16Array.from(encodeMuLaw(pcm), (byte) => MU_LAW_DECODE[byte]!)
      expect(decode(line, sampleRate)).toBe(dial)
    })
  }

  it("play each key 100 ms with 80 ms between, and pause half a second for w", () => {
    expect(dtmfTones("5", 8000).length).toBe(1440)
    expect(dtmfTones("5w5", 8000).length).toBe(1440 * 2 + 4000)
    // A repeated key is two keys: the gap between them is silence.
    const twice = dtmfTones("55", 8000)
    expect(decode(twice, 8000)).toBe("55")
    expect(twice.subarray(800, 1440).every((sample) => sample === 0)).toBe(true)
  })

  it("are silence for anything but keys (a receiver hears nothing)", () => {
    expect(decode(new Int16Array(8000), 8000)).toBe("")
    expect(dtmfTones("xyz", 8000).length).toBe(0)
  })
})
