import { describe, expect, it } from "vitest"
import { tsqueryTiersOf } from "../src/knowledge/tsqueryTiers.ts"

describe("full-text tiers of a question", () => {
  it("asks for every word first, then any two, then any one, ranking by all of them", () => {
    const tiers = tsqueryTiersOf(["'premium' & 'plan' & 'sso'"])
    expect(tiers?.tiers).toEqual([
      "(('premium') & ('plan') & ('sso'))",
      "((('premium') & ('plan')) | (('premium') & ('sso')) | (('plan') & ('sso')))",
      "(('premium') | ('plan') | ('sso'))"
    ])
    expect(tiers?.ranking).toBe("(('premium') | ('plan') | ('sso'))")
  })

  it("keeps a quoted phrase whole and a negation or explicit or as the caller wrote it", () => {
    expect(tsqueryTiersOf(["'premium' <-> 'plan' & 'sso'"])?.tiers).toEqual([
      "(('premium' <-> 'plan') & ('sso'))",
      "(('premium' <-> 'plan') | ('sso'))"
    ])
    expect(tsqueryTiersOf(["'refund' & !'store'"])?.tiers).toEqual(["('refund' & !'store')"])
    expect(tsqueryTiersOf(["'refund' | 'return'"])?.tiers).toEqual(["('refund' | 'return')"])
  })

  it("ORs the tiers of every text-search configuration, and has none for a question of stop words", () => {
    expect(tsqueryTiersOf(["'hour' & 'open'", "'horaire' & 'ouvert'"])?.tiers).toEqual([
      "(('hour') & ('open')) | (('horaire') & ('ouvert'))",
      "(('hour') | ('open')) | (('horaire') | ('ouvert'))"
    ])
    expect(tsqueryTiersOf([""])).toBeUndefined()
  })
})
