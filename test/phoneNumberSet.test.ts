import { describe, expect, it } from "vitest"
import { PhoneNumberSet } from "../src/campaigns/phoneNumberSet.ts"

describe("PhoneNumberSet", () => {
  it("answers as a Set<number> does for 300,000 E.164 numbers with repeats, across its growth", () => {
    const set = new PhoneNumberSet()
    const reference = new Set<number>()
    const added: Array<number> = []
    let disagreements = 0
    let seed = 42
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0)
    for (let i = 0; i < 300_000; i++) {
      // Numbers of every length E.164 allows (up to 15 digits); a third are repeats.
      const digits = i % 3 === 2 ? added[next() % added.length]! : ((next() % 9) + 1) * 10 ** (next() % 14) + next()
      if (set.add(digits) === reference.has(digits)) disagreements++
      reference.add(digits)
      added.push(digits)
    }
    expect(disagreements).toBe(0)
    expect(reference.size).toBeLessThan(added.length)
  })
})
