import type { TestRun } from "./testRunRecord.ts"

const escaped = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
    // XML 1.0 cannot carry most control characters, even escaped.
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, "")

const percent = (rate: number | null) => (rate === null ? "none" : `${Math.round(rate * 100)}%`)

/**
 * A test run as JUnit XML, one testcase per case (and version): failed when the case is under the
 * run's pass threshold, its message the pass rate and its text each failing conversation's reasons.
 */
export const junitReport = (run: TestRun, agentName: string): string => {
  const cases = run.cases.map((result) => {
    const passed = result.pass_rate !== null && result.pass_rate >= run.pass_threshold - 1e-9
    const name = run.compare_with === null ? result.name : `${result.name} [${result.version}]`
    const details = result.conversations.filter((conversation) => !conversation.passed).map((conversation) => {
      const reasons = conversation.error !== null
        ? [conversation.error]
        : conversation.failed_expectations.map((failure) => `${failure.expectation}: ${failure.reason}`)
      return `Repetition ${conversation.repetition} (conversation ${conversation.conversation_id ?? "none"}):\n${
        reasons.map((reason) => `  - ${reason}`).join("\n")
      }`
    }).join("\n")
    const failure = passed ?
      "" :
      `\n      <failure message="${
        escaped(
          `pass rate ${percent(result.pass_rate)} (${result.passed}/${result.completed}), needs ${
            percent(run.pass_threshold)
          }`
        )
      }" type="expectations">${escaped(details)}</failure>\n    `
    return `    <testcase classname="${escaped(agentName)}" name="${escaped(name)}">${failure}</testcase>`
  })
  const failures =
    run.cases.filter((result) => result.pass_rate === null || result.pass_rate < run.pass_threshold - 1e-9).length
  const seconds = run.started_at && run.ended_at ? (run.ended_at.getTime() - run.started_at.getTime()) / 1000 : 0
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="talkgraph agent tests" tests="${run.cases.length}" failures="${failures}">`,
    `  <testsuite name="${
      escaped(`${agentName} (test run ${run.id})`)
    }" tests="${run.cases.length}" failures="${failures}" time="${seconds}">`,
    ...cases,
    `  </testsuite>`,
    `</testsuites>`,
    ``
  ].join("\n")
}
