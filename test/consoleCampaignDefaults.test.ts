import { describe, expect, it } from "vitest"
import * as server from "../src/campaigns/campaignSettings.ts"
import * as consoleDefaults from "../web/src/campaigns/campaignDefaults.ts"

describe("the campaign wizard's starting values", () => {
  it("are the defaults the server applies to a setting left out", () => {
    expect(consoleDefaults.retryDefaults).toEqual(server.retryDefaults)
    expect(consoleDefaults.circuitBreakerDefaults).toEqual(server.circuitBreakerDefaults)
    expect(consoleDefaults.rateLimitDefault).toBe(server.rateLimitDefault)
  })
})
