import type { TranscriptTurn } from "../conversation/transcript.ts"
import type { Expectations, ToolExpectation, VariableExpectation } from "./testCase.ts"

/** What a finished test conversation shows, as the checks need it. */
export interface ObservedConversation {
  readonly transcript: ReadonlyArray<TranscriptTurn>
  /** Every graph node the conversation was at, in order of first visit. */
  readonly nodes: ReadonlyArray<string>
  /** The gathered context: extracted variables and the disposition fields. */
  readonly variables: Readonly<Record<string, unknown>>
  readonly disposition: string | null
  readonly callerTurns: number
  /** Voice mode: per caller turn, ms from the end of their speech to the agent's next audio; null in text mode. */
  readonly deadAirMs: ReadonlyArray<number> | null
}

/** An expectation that did not hold, and why, in words a person fixing the agent can act on. */
export interface FailedExpectation {
  readonly expectation: string
  readonly reason: string
}

const shown = (value: unknown) => (value === undefined ? "nothing" : JSON.stringify(value))

/** Deep equality of JSON values (object key order does not matter). */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const aKeys = Object.keys(a)
  const bKeys = Object.keys(b)
  return aKeys.length === bKeys.length &&
    aKeys.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
}

/** Whether `actual` has every field of `expected` with an equal value. */
const containsArguments = (actual: Readonly<Record<string, unknown>>, expected: Readonly<Record<string, unknown>>) =>
  Object.entries(expected).every(([key, value]) => sameJson(actual[key], value))

const parsedArguments = (text: string): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

const toolCallsOf = (transcript: ReadonlyArray<TranscriptTurn>) =>
  transcript.flatMap((turn) => turn.tool_calls ?? []).map((call) => ({
    name: call.name,
    toolUuid: call.tool_uuid,
    arguments: parsedArguments(call.arguments)
  }))

/** A tool is named as the model calls it (its function name) or by its `tool_uuid`. */
const named = (call: ReturnType<typeof toolCallsOf>[number], name: string) =>
  call.name === name || call.toolUuid === name

const present = (value: unknown) => value !== undefined && value !== null && value !== ""

const variableFailure = (
  variable: VariableExpectation,
  variables: Readonly<Record<string, unknown>>
): string | null => {
  const value = variables[variable.name]
  if (variable.present === false) {
    return present(value) ? `"${variable.name}" was extracted as ${shown(value)} but should be absent` : null
  }
  if (
    (variable.present === true || variable.equals !== undefined || variable.pattern !== undefined) && !present(value)
  ) {
    return `"${variable.name}" was not extracted`
  }
  if (variable.equals !== undefined && !sameJson(value, variable.equals)) {
    return `"${variable.name}" is ${shown(value)}, expected ${shown(variable.equals)}`
  }
  if (variable.pattern !== undefined) {
    const text = typeof value === "string" ? value : JSON.stringify(value)
    if (!new RegExp(variable.pattern).test(text)) {
      return `"${variable.name}" is ${shown(value)}, which does not match /${variable.pattern}/`
    }
  }
  return null
}

const toolFailure = (expected: ToolExpectation, calls: ReturnType<typeof toolCallsOf>): string | null => {
  const matching = calls.filter((call) => named(call, expected.name))
  if (matching.length === 0) return `"${expected.name}" was never called`
  const wanted = expected.arguments
  if (wanted === undefined || matching.some((call) => containsArguments(call.arguments, wanted))) return null
  return `"${expected.name}" was called with ${matching.map((call) => shown(call.arguments)).join(", ")}, not with ${
    shown(wanted)
  }`
}

/** The first agent reply said again right after itself, if any (a loop: the agent is stuck). */
export const repeatedReply = (transcript: ReadonlyArray<TranscriptTurn>): string | null => {
  const replies = transcript.filter((turn) => turn.role === "assistant" && turn.text.trim() !== "")
    .map((turn) => turn.text.trim().toLowerCase().replace(/\s+/g, " "))
  const at = replies.findIndex((text, index) => index > 0 && text === replies[index - 1])
  return at === -1 ? null : replies[at]!
}

/**
 * The rule-based expectations that did not hold, in the order they are declared. Free-text
 * criteria are not checked here: they need the judge.
 */
export const failedExpectations = (
  expectations: Expectations,
  observed: ObservedConversation
): ReadonlyArray<FailedExpectation> => {
  const failures: Array<FailedExpectation> = []
  const fail = (expectation: string, reason: string) => failures.push({ expectation, reason })
  const path = observed.nodes.join(" → ")
  for (const node of expectations.nodes_visited ?? []) {
    if (!observed.nodes.includes(node)) fail("nodes_visited", `node "${node}" was not visited (path: ${path})`)
  }
  for (const node of expectations.nodes_not_visited ?? []) {
    if (observed.nodes.includes(node)) fail("nodes_not_visited", `node "${node}" was visited (path: ${path})`)
  }
  for (const variable of expectations.variables ?? []) {
    const reason = variableFailure(variable, observed.variables)
    if (reason) fail("variables", reason)
  }
  const accepted = expectations.disposition ?? []
  if (accepted.length > 0 && (observed.disposition === null || !accepted.includes(observed.disposition))) {
    fail(
      "disposition",
      `the disposition is ${shown(observed.disposition)}, expected ${accepted.map(shown).join(" or ")}`
    )
  }
  const calls = toolCallsOf(observed.transcript)
  for (const tool of expectations.tools_called ?? []) {
    const reason = toolFailure(tool, calls)
    if (reason) fail("tools_called", reason)
  }
  for (const name of expectations.tools_not_called ?? []) {
    if (calls.some((call) => named(call, name))) fail("tools_not_called", `"${name}" was called`)
  }
  if (expectations.max_turns !== undefined && observed.callerTurns > expectations.max_turns) {
    fail("max_turns", `the caller needed ${observed.callerTurns} turns, more than ${expectations.max_turns}`)
  }
  if (expectations.max_dead_air_seconds !== undefined && observed.deadAirMs !== null) {
    const longest = Math.max(0, ...observed.deadAirMs)
    if (longest > expectations.max_dead_air_seconds * 1000) {
      fail(
        "max_dead_air_seconds",
        `the caller waited ${
          (longest / 1000).toFixed(1)
        } s for the agent, more than ${expectations.max_dead_air_seconds} s`
      )
    }
  }
  if (expectations.no_loop !== false) {
    const repeated = repeatedReply(observed.transcript)
    if (repeated !== null) fail("no_loop", `the agent repeated itself: "${repeated}"`)
  }
  return failures
}

/** The nodes a transcript went through, in order of first visit, ending with where it stopped. */
export const visitedNodes = (
  transcript: ReadonlyArray<TranscriptTurn>,
  finalNode: string | null
): ReadonlyArray<string> => {
  const nodes: Array<string> = []
  for (const node of [...transcript.map((turn) => turn.node_id), ...(finalNode === null ? [] : [finalNode])]) {
    if (!nodes.includes(node)) nodes.push(node)
  }
  return nodes
}
