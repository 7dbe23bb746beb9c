import { describe, expect, it } from "vitest"
import { assignCallerIds, type PoolNumber, poolRoom } from "../src/campaigns/callerIdPool.ts"

const open = (address: string, room = Number.POSITIVE_INFINITY): PoolNumber => ({ address, room })

describe("picking each call's caller ID from a pool", () => {
  it("round robin takes the numbers in turn from the start it is given, skipping those without room", () => {
    const pool = [open("+12125550001"), open("+12125550002", 1), open("+12125550003")]
    expect(assignCallerIds("round_robin", pool, ["+1", "+2", "+3", "+4", "+5"], 1)).toEqual([
      "+12125550002",
      "+12125550003",
      "+12125550001",
      "+12125550003",
      "+12125550001"
    ])
    // Successive claims start where the attempt ids put them: the first number is not favoured.
    expect(assignCallerIds("round_robin", pool, ["+1"], 5)).toEqual(["+12125550003"])
  })

  it("never gives more calls than the pool's room; recipients beyond it get none", () => {
    const pool = [open("+12125550001", 1), open("+12125550002", 0)]
    expect(poolRoom(pool)).toBe(1)
    expect(assignCallerIds("round_robin", pool, ["+13125550001", "+13125550002"], 0)).toEqual([
      "+12125550001",
      undefined
    ])
  })

  it.each([
    ["same area code", "+12125559999", "+12125550001"],
    ["the longest shared prefix within a country", "+14155559999", "+14155550002"],
    ["same country, no shared area: the country's number", "+442079461234", "+441614960003"],
    ["Canada shares +1 with the US: the closest NANP area", "+16135550000", "+16175550004"]
  ])("local presence: %s", (_, recipient, expected) => {
    const pool = [open("+12125550001"), open("+14155550002"), open("+441614960003"), open("+16175550004")]
    expect(assignCallerIds("local_presence", pool, [recipient], 0)).toEqual([expected])
  })

  it("local presence rotates among equally close numbers, and falls back to the next closest when they are full", () => {
    const pool = [open("+12125550001"), open("+12125550002"), open("+13125550003")]
    expect(assignCallerIds("local_presence", pool, ["+12125559998", "+12125559999"], 0)).toEqual([
      "+12125550001",
      "+12125550002"
    ])
    const full = [open("+12125550001", 0), open("+13125550003"), open("+33142685300")]
    // New York is full: another American number before the French one.
    expect(assignCallerIds("local_presence", full, ["+12125559999"], 0)).toEqual(["+13125550003"])
    // A country with no pool number: any number, in turn.
    expect(assignCallerIds("local_presence", full, ["+4930901820", "+4930901821"], 0)).toEqual([
      "+13125550003",
      "+33142685300"
    ])
  })
})
