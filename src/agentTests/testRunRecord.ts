import { Schema } from "effect"
import { TranscriptTurn } from "../conversation/transcript.ts"
import { Timestamp } from "../domain/wireTypes.ts"

/** Which version of the agent a test talks to. */
export const TestedVersion = Schema.Literal("draft", "published")
export type TestedVersion = typeof TestedVersion.Type

/** How the simulated caller talks to the agent: the text chat path, or a voice call through the speech stack. */
export const TestMode = Schema.Literal("text", "voice")
export type TestMode = typeof TestMode.Type

export const CreateTestRunRequest = Schema.Struct({
  test_ids: Schema.optional(
    Schema.Array(Schema.Int).pipe(Schema.minItems(1), Schema.maxItems(200)).annotations({
      description: "The cases to run (default: every case of the agent)"
    })
  ),
  repetitions: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 20)), { default: () => 1 }).annotations({
    description: "Conversations per case (LLMs are not deterministic: a pass rate over several tells more)"
  }),
  concurrency: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 10)), { default: () => 2 }).annotations({
    description: "Conversations held at once"
  }),
  version: Schema.optionalWith(TestedVersion, { default: () => "published" as const }),
  compare_with: Schema.optional(TestedVersion.annotations({
    description: "Also run the suite on this version and compare pass rates case by case"
  })),
  pass_threshold: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 1 }).annotations({
    description: "A case passes when at least this share of its conversations pass (default 1: all of them)"
  }),
  mode: Schema.optionalWith(TestMode, { default: () => "text" as const }).annotations({
    description:
      "`text`: the chat path (fast). `voice`: a call through the organization's STT and TTS on an in-process line (turn-taking, interruptions and tools exercised); never dials"
  }),
  voice_speed: Schema.optionalWith(Schema.Number.pipe(Schema.between(1, 10)), { default: () => 1 }).annotations({
    description:
      "Voice mode: how many times faster than real time the call runs. Above 1 only with fast local speech and LLM providers: a provider's latency counts `voice_speed` times over"
  })
}).annotations({ identifier: "CreateTestRunRequest" })
export type CreateTestRunRequest = typeof CreateTestRunRequest.Type

export const FailedExpectation = Schema.Struct({
  expectation: Schema.String,
  reason: Schema.String
}).annotations({ identifier: "FailedExpectation" })

/** One simulated conversation of a case and what the checks found. */
export const TestConversation = Schema.Struct({
  test_id: Schema.Int,
  version: TestedVersion,
  repetition: Schema.Int,
  conversation_id: Schema.NullOr(Schema.Int).annotations({ description: "The run (GET /api/v2/conversations/{id})" }),
  passed: Schema.Boolean,
  caller_turns: Schema.Int,
  dead_air_ms: Schema.NullOr(Schema.Array(Schema.Number)).annotations({
    description: "Voice mode: per caller turn, ms from the end of their speech to the agent's next audio"
  }),
  end_reason: Schema.NullOr(Schema.String),
  disposition: Schema.NullOr(Schema.String),
  nodes_visited: Schema.Array(Schema.String),
  failed_expectations: Schema.Array(FailedExpectation),
  error: Schema.NullOr(Schema.String).annotations({
    description: "Why the conversation could not be held (the agent's or the caller's model failed)"
  }),
  transcript: Schema.Array(TranscriptTurn)
}).annotations({ identifier: "TestConversation" })
export type TestConversation = typeof TestConversation.Type

export const TestCaseResult = Schema.Struct({
  test_id: Schema.Int,
  name: Schema.String,
  version: TestedVersion,
  completed: Schema.Int.annotations({ description: "Conversations finished so far" }),
  passed: Schema.Int,
  pass_rate: Schema.NullOr(Schema.Number).annotations({ description: "passed / completed; null before any finished" }),
  conversations: Schema.Array(TestConversation)
}).annotations({ identifier: "TestCaseResult" })
export type TestCaseResult = typeof TestCaseResult.Type

export const VersionComparison = Schema.Struct({
  test_id: Schema.Int,
  name: Schema.String,
  pass_rate: Schema.NullOr(Schema.Number).annotations({ description: "On the run's `version`" }),
  compare_pass_rate: Schema.NullOr(Schema.Number).annotations({ description: "On `compare_with`" }),
  change: Schema.NullOr(Schema.Number).annotations({ description: "pass_rate − compare_pass_rate" })
}).annotations({ identifier: "VersionComparison" })
export type VersionComparison = typeof VersionComparison.Type

export const TestRunState = Schema.Literal("queued", "running", "completed", "failed")

export const TestRun = Schema.Struct({
  id: Schema.Int,
  agent_id: Schema.Int,
  status: TestRunState,
  version: TestedVersion,
  compare_with: Schema.NullOr(TestedVersion),
  repetitions: Schema.Int,
  concurrency: Schema.Int,
  pass_threshold: Schema.Number,
  mode: TestMode,
  voice_speed: Schema.NullOr(Schema.Number).annotations({ description: "Voice mode's speed; null in text mode" }),
  test_ids: Schema.Array(Schema.Int),
  passed: Schema.NullOr(Schema.Boolean).annotations({
    description: "Once completed: every case reached the pass threshold on `version`"
  }),
  pass_rate: Schema.NullOr(Schema.Number).annotations({ description: "Over every finished conversation on `version`" }),
  error: Schema.NullOr(Schema.String),
  cases: Schema.Array(TestCaseResult),
  comparison: Schema.NullOr(Schema.Array(VersionComparison)),
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  ended_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "TestRun" })
export type TestRun = typeof TestRun.Type
