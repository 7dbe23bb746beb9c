import { Effect } from "effect"
import { publishGateRefusal } from "../../src/agentTests/publishGate.ts"
import { makeTestCaseRows } from "./testCaseRows.ts"
import { makeTestRunRows } from "./testRunRows.ts"

/** A case as the gate compares it; a run's plan keeps `updated_at` as JSON text, the table as a Date. */
const gateCase = (testCase: { readonly id: number; readonly name: string; readonly updated_at: Date | string }) => ({
  id: testCase.id,
  name: testCase.name,
  updatedAt: new Date(testCase.updated_at).getTime()
})

/**
 * Reads what the publish gate needs (the agent's cases, its stored draft and its latest run on the
 * draft) and answers why the draft may not be published yet, or null. Runs inside the publishing
 * transaction, after the workflow row is locked, so a concurrent edit waits for it.
 */
export const makePublishGateCheck = Effect.gen(function*() {
  const cases = yield* makeTestCaseRows
  const runs = yield* makeTestRunRows
  return (organizationId: number, agentId: number) =>
    Effect.gen(function*() {
      const current = yield* cases.some(organizationId, agentId, undefined)
      const fingerprint = yield* runs.draftFingerprint(agentId)
      const latest = yield* runs.latestOnDraft(agentId)
      return publishGateRefusal({
        agentId,
        cases: current.map(gateCase),
        draftFingerprint: fingerprint ?? "",
        latestDraftRun: latest === null ? null : {
          id: latest.run.id,
          status: latest.run.status,
          passed: latest.run.passed,
          draftFingerprint: latest.plan.draft_fingerprint ?? null,
          cases: latest.plan.cases.map(gateCase)
        }
      })
    })
})
