import { describe, expect, it } from "vitest"
import { failedExpectations, repeatedReply, visitedNodes } from "../src/agentTests/expectationChecks.ts"
import { junitReport } from "../src/agentTests/junitReport.ts"
import { caseResults, compareVersions, overallPassRate, suitePassed } from "../src/agentTests/passRates.ts"
import { callerMessages, callerTurnOf, verdictsOf } from "../src/agentTests/simulatorPrompts.ts"
import { expectationProblems } from "../src/agentTests/testCase.ts"
import type { TestConversation, TestRun } from "../src/agentTests/testRunRecord.ts"
import type { TranscriptTurn } from "../src/conversation/transcript.ts"

const at = "2026-01-01T00:00:00.000Z"
const agent = (text: string, node = "start", extra: Partial<TranscriptTurn> = {}): TranscriptTurn => ({
  role: "assistant",
  text,
  node_id: node,
  at,
  ...extra
})
const user = (text: string, node = "start"): TranscriptTurn => ({ role: "user", text, node_id: node, at })

const observed = (overrides: Partial<Parameters<typeof failedExpectations>[1]> = {}) => ({
  transcript: [agent("Hi"), user("Hello"), agent("Budget?", "qualify")],
  nodes: ["start", "qualify"],
  variables: { budget: 5000, city: "Paris", empty: "" },
  disposition: "QUALIFIED",
  callerTurns: 1,
  deadAirMs: null,
  ...overrides
})

describe("expectation checks", () => {
  it("passes a conversation meeting every rule", () => {
    expect(failedExpectations({
      nodes_visited: ["qualify"],
      nodes_not_visited: ["end"],
      variables: [{ name: "budget", equals: 5000 }, { name: "city", pattern: "^Par" }, {
        name: "empty",
        present: false
      }],
      disposition: ["QUALIFIED", "CALLBACK"],
      max_turns: 1
    }, observed())).toEqual([])
  })

  it("names the path, variables and disposition that did not hold", () => {
    expect(failedExpectations({
      nodes_visited: ["end"],
      nodes_not_visited: ["qualify"],
      variables: [
        { name: "budget", equals: 6000 },
        { name: "city", pattern: "^Lon" },
        { name: "phone", present: true },
        { name: "city", present: false }
      ],
      disposition: ["NOT_INTERESTED"],
      max_turns: 1
    }, observed({ callerTurns: 2 }))).toEqual([
      { expectation: "nodes_visited", reason: "node \"end\" was not visited (path: start → qualify)" },
      { expectation: "nodes_not_visited", reason: "node \"qualify\" was visited (path: start → qualify)" },
      { expectation: "variables", reason: "\"budget\" is 5000, expected 6000" },
      { expectation: "variables", reason: "\"city\" is \"Paris\", which does not match /^Lon/" },
      { expectation: "variables", reason: "\"phone\" was not extracted" },
      { expectation: "variables", reason: "\"city\" was extracted as \"Paris\" but should be absent" },
      { expectation: "disposition", reason: "the disposition is \"QUALIFIED\", expected \"NOT_INTERESTED\"" },
      { expectation: "max_turns", reason: "the caller needed 2 turns, more than 1" }
    ])
  })

  it("compares variables as JSON, whatever the key order", () => {
    const variables = { address: { city: "Paris", zip: "75001" } }
    expect(failedExpectations(
      { variables: [{ name: "address", equals: { zip: "75001", city: "Paris" } }] },
      observed({ variables })
    )).toEqual([])
  })

  it("checks tools called by name and by a subset of their arguments", () => {
    const call = (name: string, args: unknown) => ({
      id: "c1",
      name,
      tool_uuid: "u",
      arguments: JSON.stringify(args),
      status: "success" as const,
      latency_ms: 5,
      result: "{}",
      truncated: false
    })
    const transcript = [agent("", "start", { tool_calls: [call("book_slot", { day: "monday", hour: 9, note: "x" })] })]
    const base = observed({ transcript })
    expect(failedExpectations({ tools_called: [{ name: "book_slot", arguments: { day: "monday", hour: 9 } }] }, base))
      .toEqual([])
    expect(failedExpectations({ tools_called: [{ name: "u" }] }, base)).toEqual([])
    expect(failedExpectations({
      tools_called: [{ name: "book_slot", arguments: { day: "friday" } }, { name: "send_sms" }],
      tools_not_called: ["book_slot"]
    }, base)).toEqual([
      {
        expectation: "tools_called",
        reason:
          "\"book_slot\" was called with {\"day\":\"monday\",\"hour\":9,\"note\":\"x\"}, not with {\"day\":\"friday\"}"
      },
      { expectation: "tools_called", reason: "\"send_sms\" was never called" },
      { expectation: "tools_not_called", reason: "\"book_slot\" was called" }
    ])
  })

  it("finds an agent stuck repeating itself, unless loops are allowed", () => {
    const transcript = [agent("Can I help?"), user("Hm"), agent("Can I  help?"), user("Hm")]
    expect(repeatedReply(transcript)).toBe("can i help?")
    expect(failedExpectations({}, observed({ transcript }))).toEqual([
      { expectation: "no_loop", reason: "the agent repeated itself: \"can i help?\"" }
    ])
    expect(failedExpectations({ no_loop: false }, observed({ transcript }))).toEqual([])
    expect(repeatedReply([agent("A"), agent("B"), agent("A")])).toBeNull()
  })

  it("fails a voice conversation whose caller waited too long for the agent, and skips the check in text", () => {
    const expectations = { max_dead_air_seconds: 2 }
    expect(failedExpectations(expectations, observed({ deadAirMs: [800, 1900] }))).toEqual([])
    expect(failedExpectations(expectations, observed({ deadAirMs: [800, 2600, 900] }))).toEqual([
      { expectation: "max_dead_air_seconds", reason: "the caller waited 2.6 s for the agent, more than 2 s" }
    ])
    expect(failedExpectations(expectations, observed({ deadAirMs: null }))).toEqual([])
  })

  it("lists the nodes in order of first visit, ending where the conversation stopped", () => {
    expect(visitedNodes([agent("a"), user("b"), agent("c", "qualify"), user("d", "qualify")], "end")).toEqual([
      "start",
      "qualify",
      "end"
    ])
  })

  it("refuses patterns that are not regular expressions", () => {
    expect(expectationProblems({ variables: [{ name: "a", pattern: "(" }, { name: "b", pattern: "^\\d+$" }] })).toEqual(
      ["expectations.variables[0].pattern is not a valid regular expression"]
    )
  })
})

describe("simulator and judge prompts", () => {
  it("shows the caller the agent's words as what it hears and its own as its replies", () => {
    const messages = callerMessages("Skeptical, asks about price", { first_name: "Ada" }, [
      agent("Hi Ada"),
      user("Who is this?"),
      agent("", "start")
    ])
    expect(messages[0]!.content).toContain("Skeptical, asks about price")
    expect(messages[0]!.content).toContain("{\"first_name\":\"Ada\"}")
    expect(messages.slice(1)).toEqual([{ role: "user", content: "Hi Ada" }, {
      role: "assistant",
      content: "Who is this?"
    }])
    expect(callerTurnOf({ message: " Sure ", hang_up: false })).toEqual({ message: "Sure", hangUp: false })
    expect(callerTurnOf({ message: "x" })).toBeNull()
  })

  it("fails a criterion the judge did not grade", () => {
    expect(verdictsOf(["asks budget", "is polite"], { results: [{ criterion: 2, passed: true, reason: "Polite." }] }))
      .toEqual([
        { criterion: "asks budget", passed: false, reason: "The judge gave no verdict on this criterion" },
        { criterion: "is polite", passed: true, reason: "Polite." }
      ])
    expect(verdictsOf(["x"], "not json")[0]!.passed).toBe(false)
  })
})

const conversation = (testId: number, version: "draft" | "published", repetition: number, passed: boolean) =>
  ({
    test_id: testId,
    version,
    repetition,
    conversation_id: repetition,
    passed,
    caller_turns: 1,
    dead_air_ms: null,
    end_reason: "user_ended",
    disposition: null,
    nodes_visited: ["start"],
    failed_expectations: passed ? [] : [{ expectation: "nodes_visited", reason: "node \"qualify\" was not visited" }],
    error: null,
    transcript: []
  }) satisfies TestConversation

describe("pass rates and comparison", () => {
  const cases = [{ id: 1, name: "Books" }, { id: 2, name: "Refuses" }]
  const finished = [
    conversation(1, "published", 2, true),
    conversation(1, "published", 1, true),
    conversation(2, "published", 1, true),
    conversation(2, "published", 2, false),
    conversation(1, "draft", 1, false),
    conversation(1, "draft", 2, true)
  ]

  it("rates each case over its repetitions and compares versions side by side", () => {
    const results = caseResults(cases, ["published", "draft"], finished)
    expect(results.map((result) => [result.test_id, result.version, result.completed, result.pass_rate])).toEqual([
      [1, "published", 2, 1],
      [2, "published", 2, 0.5],
      [1, "draft", 2, 0.5],
      [2, "draft", 0, null]
    ])
    expect(results[0]!.conversations.map((item) => item.repetition)).toEqual([1, 2])
    expect(overallPassRate(finished, "published")).toBe(0.75)
    expect(suitePassed(results, "published", 1)).toBe(false)
    expect(suitePassed(results, "published", 0.5)).toBe(true)
    expect(suitePassed(results, "draft", 0)).toBe(false)
    expect(compareVersions(results, "draft", "published")).toEqual([
      { test_id: 1, name: "Books", pass_rate: 0.5, compare_pass_rate: 1, change: -0.5 },
      { test_id: 2, name: "Refuses", pass_rate: null, compare_pass_rate: 0.5, change: null }
    ])
  })

  it("writes JUnit XML with a failure per case under the threshold, escaped", () => {
    const results = caseResults([{ id: 1, name: "Books" }, { id: 2, name: "Refuses <\"early\">" }], ["published"], [
      conversation(1, "published", 1, true),
      conversation(2, "published", 1, false)
    ])
    const run: TestRun = {
      id: 7,
      agent_id: 3,
      status: "completed",
      version: "published",
      compare_with: null,
      repetitions: 1,
      concurrency: 1,
      pass_threshold: 1,
      mode: "text",
      voice_speed: null,
      test_ids: [1, 2],
      passed: false,
      pass_rate: 0.5,
      error: null,
      cases: results,
      comparison: null,
      created_at: new Date(at),
      started_at: new Date("2026-01-01T00:00:00.000Z"),
      ended_at: new Date("2026-01-01T00:00:02.500Z")
    }
    const xml = junitReport(run, "Sales & support")
    expect(xml).toContain(
      `<testsuite name="Sales &amp; support (test run 7)" tests="2" failures="1" time="2.5">`
    )
    expect(xml).toContain(`<testcase classname="Sales &amp; support" name="Books"></testcase>`)
    expect(xml).toContain(`name="Refuses &lt;&quot;early&quot;&gt;">`)
    expect(xml).toContain(
      `<failure message="pass rate 0% (0/1), needs 100%" type="expectations">Repetition 1 (conversation 1):\n  - nodes_visited: node &quot;qualify&quot; was not visited</failure>`
    )
  })
})
