import { describe, expect, it } from "vitest"
import { type GateRun, publishGateRefusal } from "../src/agentTests/publishGate.ts"

const cases = [{ id: 1, name: "Books", updatedAt: 1000 }]
const run = (over: Partial<GateRun>): GateRun => ({
  id: 7,
  status: "completed",
  passed: true,
  draftFingerprint: "abc",
  cases,
  ...over
})
const refusal = (latestDraftRun: GateRun | null) =>
  publishGateRefusal({ agentId: 3, cases, draftFingerprint: "abc", latestDraftRun })

describe("publishGateRefusal", () => {
  it("lets a draft through only when its latest run passed on it, over every current case", () => {
    expect(refusal(run({}))).toBeNull()
    expect(refusal(run({ status: "running", passed: null }))).toContain("test run 7 on the draft is still running")
    expect(refusal(run({ status: "queued", passed: null }))).toContain("is still queued")
    expect(refusal(run({ status: "failed", passed: null }))).toContain("test run 7 failed")
    expect(refusal(run({ passed: false }))).toContain("test run 7 did not pass every case")
    expect(refusal(run({ draftFingerprint: null }))).toContain("the draft changed after test run 7 started")
    expect(refusal(run({ cases: [{ id: 1, name: "Books", updatedAt: 999 }] }))).toContain(
      `test case(s) "Books" were added or changed after test run 7`
    )
    expect(refusal(null)).toContain("no test run on the draft yet")
  })
})
