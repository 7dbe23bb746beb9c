import type { TestCaseResult, TestConversation, TestedVersion, VersionComparison } from "./testRunRecord.ts"

/** A case as a run snapshots it. */
export interface CaseName {
  readonly id: number
  readonly name: string
}

const rate = (passed: number, total: number) => (total === 0 ? null : passed / total)

/** Results per case and version, in the run's case order, from the conversations finished so far. */
export const caseResults = (
  cases: ReadonlyArray<CaseName>,
  versions: ReadonlyArray<TestedVersion>,
  conversations: ReadonlyArray<TestConversation>
): ReadonlyArray<TestCaseResult> =>
  versions.flatMap((version) =>
    cases.map((testCase) => {
      const own = conversations.filter((conversation) =>
        conversation.test_id === testCase.id && conversation.version === version
      ).sort((a, b) => a.repetition - b.repetition)
      const passed = own.filter((conversation) => conversation.passed).length
      return {
        test_id: testCase.id,
        name: testCase.name,
        version,
        completed: own.length,
        passed,
        pass_rate: rate(passed, own.length),
        conversations: own
      }
    })
  )

/** The pass rate over every finished conversation on `version`. */
export const overallPassRate = (conversations: ReadonlyArray<TestConversation>, version: TestedVersion) => {
  const own = conversations.filter((conversation) => conversation.version === version)
  return rate(own.filter((conversation) => conversation.passed).length, own.length)
}

/** Whether every case reached `threshold` on `version` (a case with no finished conversation has not). */
export const suitePassed = (results: ReadonlyArray<TestCaseResult>, version: TestedVersion, threshold: number) =>
  results.filter((result) => result.version === version).every((result) =>
    result.pass_rate !== null && result.pass_rate >= threshold - 1e-9
  )

/** Each case's pass rate on the two versions, side by side. */
export const compareVersions = (
  results: ReadonlyArray<TestCaseResult>,
  version: TestedVersion,
  compareWith: TestedVersion
): ReadonlyArray<VersionComparison> =>
  results.filter((result) => result.version === version).map((result) => {
    const other = results.find((candidate) => candidate.test_id === result.test_id && candidate.version === compareWith)
    const compareRate = other?.pass_rate ?? null
    return {
      test_id: result.test_id,
      name: result.name,
      pass_rate: result.pass_rate,
      compare_pass_rate: compareRate,
      change: result.pass_rate === null || compareRate === null ? null : result.pass_rate - compareRate
    }
  })
