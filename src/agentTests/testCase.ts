import { Schema } from "effect"
import { JsonObject, JsonValue, Timestamp } from "../domain/wireTypes.ts"

const Text = (max: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(max))

/** A variable the agent must have extracted by the end: equal to a value, matching a pattern, or (not) present. */
export const VariableExpectation = Schema.Struct({
  name: Text(200),
  equals: Schema.optional(JsonValue),
  pattern: Schema.optional(Text(500).annotations({ description: "A regular expression the value's text must match" })),
  present: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "VariableExpectation" })
export type VariableExpectation = typeof VariableExpectation.Type

/** A library tool the agent must call, with at least these arguments (a subset, compared as JSON). */
export const ToolExpectation = Schema.Struct({
  name: Text(200),
  arguments: Schema.optional(JsonObject)
}).annotations({ identifier: "ToolExpectation" })
export type ToolExpectation = typeof ToolExpectation.Type

/** What must hold once the conversation has ended. Every field is optional; an empty object expects nothing. */
export const Expectations = Schema.Struct({
  nodes_visited: Schema.optional(
    Schema.Array(Text(200)).annotations({ description: "Node ids the path must include" })
  ),
  nodes_not_visited: Schema.optional(
    Schema.Array(Text(200)).annotations({ description: "Node ids the path must not include" })
  ),
  variables: Schema.optional(Schema.Array(VariableExpectation)),
  disposition: Schema.optional(
    Schema.Array(Text(200)).annotations({ description: "Accepted dispositions (any one of them)" })
  ),
  tools_called: Schema.optional(Schema.Array(ToolExpectation)),
  tools_not_called: Schema.optional(Schema.Array(Text(200))),
  max_turns: Schema.optional(
    Schema.Int.pipe(Schema.between(1, 200)).annotations({ description: "At most this many caller turns" })
  ),
  no_loop: Schema.optional(
    Schema.Boolean.annotations({ description: "The agent never says the same reply twice in a row (default true)" })
  ),
  max_dead_air_seconds: Schema.optional(
    Schema.Number.pipe(Schema.between(0.1, 60)).annotations({
      description:
        "Voice mode: the longest the caller may wait, from the end of their speech to the agent's next audio (text conversations have no silence to measure)"
    })
  ),
  criteria: Schema.optional(
    Schema.Array(Text(2000)).pipe(Schema.maxItems(20)).annotations({
      description: "Free-text criteria graded by an LLM judge, each pass or fail with its reason"
    })
  )
}).annotations({ identifier: "TestExpectations" })
export type Expectations = typeof Expectations.Type

const caseFields = {
  name: Text(200),
  persona: Text(8000).annotations({
    description: "Instructions for the LLM playing the caller: who they are, what they want, how they behave"
  }),
  variables: JsonObject.annotations({ description: "The contact's variables (the run's initial context)" }),
  max_turns: Schema.Int.pipe(Schema.between(1, 50)).annotations({
    description: "The conversation ends after this many caller turns"
  }),
  expectations: Expectations,
  interrupts: Schema.Boolean.annotations({
    description:
      "Voice mode: the caller talks over the agent's replies (each after the greeting, a second into it), as an impatient person does"
  })
}

export const CreateTestCaseRequest = Schema.Struct({
  ...caseFields,
  variables: Schema.optionalWith(caseFields.variables, { default: () => ({}) }),
  max_turns: Schema.optionalWith(caseFields.max_turns, { default: () => 10 }),
  expectations: Schema.optionalWith(caseFields.expectations, { default: () => ({}) }),
  interrupts: Schema.optionalWith(caseFields.interrupts, { default: () => false })
}).annotations({ identifier: "CreateTestCaseRequest" })
export type CreateTestCaseRequest = typeof CreateTestCaseRequest.Type

export const UpdateTestCaseRequest = Schema.partial(Schema.Struct(caseFields)).annotations({
  identifier: "UpdateTestCaseRequest"
})
export type UpdateTestCaseRequest = typeof UpdateTestCaseRequest.Type

export const TestCase = Schema.Struct({
  id: Schema.Int,
  agent_id: Schema.Int,
  ...caseFields,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "TestCase" })
export type TestCase = typeof TestCase.Type

/** Problems a schema cannot see: patterns that are not regular expressions. */
export const expectationProblems = (expectations: Expectations): ReadonlyArray<string> =>
  (expectations.variables ?? []).flatMap((variable, index) => {
    if (variable.pattern === undefined) return []
    try {
      new RegExp(variable.pattern)
      return []
    } catch {
      return [`expectations.variables[${index}].pattern is not a valid regular expression`]
    }
  })
