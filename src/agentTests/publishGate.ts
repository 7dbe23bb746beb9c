import { switchSetting } from "../workflows/switchSetting.ts"

/**
 * An agent whose configurations say `publish_requires_tests: true` publishes a draft only after a
 * test run on that very draft passed every case the agent has now. "That very draft" is checked by
 * a fingerprint of the stored draft taken when the run started, so an edit after the run (or while
 * it ran) asks for a new run; a case added or edited since the run does the same.
 */

/** The run the gate reads: the latest run on the draft, with what it recorded when it started. */
export interface GateRun {
  readonly id: number
  readonly status: "queued" | "running" | "completed" | "failed"
  readonly passed: boolean | null
  readonly draftFingerprint: string | null
  readonly cases: ReadonlyArray<{ readonly id: number; readonly name: string; readonly updatedAt: number }>
}

export interface PublishGateFacts {
  readonly agentId: number
  readonly cases: ReadonlyArray<{ readonly id: number; readonly name: string; readonly updatedAt: number }>
  readonly draftFingerprint: string
  readonly latestDraftRun: GateRun | null
}

const runAgain = (agentId: number) =>
  `run the suite on the draft with POST /api/v2/agents/${agentId}/test-runs {"version": "draft"} (or \`talkgraph test ${agentId} --publish\`)`

/** Why the draft may not be published yet; null when the latest run on it passed every current case. */
export const publishGateRefusal = (facts: PublishGateFacts): string | null => {
  const prefix = "This agent publishes only after its tests pass on the draft"
  if (facts.cases.length === 0) {
    return `${prefix}, and it has no test cases: add some with POST /api/v2/agents/${facts.agentId}/tests`
  }
  const run = facts.latestDraftRun
  if (run === null) return `${prefix}: no test run on the draft yet; ${runAgain(facts.agentId)}`
  if (run.status === "queued" || run.status === "running") {
    return `${prefix}: test run ${run.id} on the draft is still ${run.status}; publish when it has passed`
  }
  if (run.status === "failed") return `${prefix}: test run ${run.id} failed; ${runAgain(facts.agentId)}`
  if (run.passed !== true) return `${prefix}: test run ${run.id} did not pass every case`
  if (run.draftFingerprint !== facts.draftFingerprint) {
    return `${prefix}: the draft changed after test run ${run.id} started; ${runAgain(facts.agentId)}`
  }
  const tested = new Map(run.cases.map((testCase) => [testCase.id, testCase.updatedAt]))
  const untested = facts.cases.filter((testCase) => tested.get(testCase.id) !== testCase.updatedAt)
  if (untested.length > 0) {
    const names = untested.map((testCase) => `"${testCase.name}"`).join(", ")
    return `${prefix}: test case(s) ${names} were added or changed after test run ${run.id}; ${runAgain(facts.agentId)}`
  }
  return null
}

/** `publish_requires_tests`: publishing waits for a passing test run on the draft. */
export const publishRequiresTestsSetting = switchSetting("publish_requires_tests")
