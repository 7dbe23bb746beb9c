import { Effect } from "effect"
import { ChatSessions, type SessionRef, type SessionView } from "../../services/ChatSessions.ts"
import { ConversationStarts } from "../../services/ConversationStarts.ts"
import { type LlmConnection, LlmGenerator, type LlmUsage } from "../../services/LlmGenerator.ts"
import { failedExpectations, visitedNodes } from "../../src/agentTests/expectationChecks.ts"
import {
  callerJsonSchema,
  callerMessages,
  callerSchemaName,
  callerTurnOf,
  judgeJsonSchema,
  judgeMessages,
  judgeSchemaName,
  verdictsOf
} from "../../src/agentTests/simulatorPrompts.ts"
import type { TestCase } from "../../src/agentTests/testCase.ts"
import type { TestConversation, TestedVersion } from "../../src/agentTests/testRunRecord.ts"
import type { WorkflowId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import type { makeTestRunRows } from "./testRunRows.ts"

type TestRunRows = Effect.Effect.Success<typeof makeTestRunRows>

const silent = () => Effect.void

/** Why the simulated caller or the judge could not be asked, as shown on the result. */
class SimulationFailed {
  readonly _tag = "SimulationFailed"
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

const dispositionOf = (context: Readonly<Record<string, unknown>>) => {
  const value = context.mapped_call_disposition ?? context.call_disposition
  return typeof value === "string" && value !== "" ? value : null
}

/**
 * One conversation of a test case: the agent through the text chat channel (the real engine, as a
 * `testchat` run) and the simulated caller through the organization's LLM, turn by turn until
 * either ends it or the case's turn limit; then the rule checks and, when they hold, the judge.
 */
export const makeSimulatedConversation = (rows: TestRunRows) =>
  Effect.gen(function*() {
    const chats = yield* ChatSessions
    const starts = yield* ConversationStarts
    const generator = yield* LlmGenerator

    const ask = (connection: LlmConnection, request: {
      readonly messages: Parameters<typeof generator.generateStructured>[0]["messages"]
      readonly schemaName: string
      readonly jsonSchema: Record<string, unknown>
    }, who: string) =>
      generator.generateStructured({ connection, ...request }).pipe(
        Effect.mapError((failure) =>
          new SimulationFailed(
            `The ${who}'s model failed (${failure.reason}${failure.status === null ? "" : ` ${failure.status}`})`
          )
        )
      )

    const hold = (
      principal: Principal,
      agentId: WorkflowId,
      testCase: TestCase,
      version: TestedVersion,
      repetition: number
    ): Effect.Effect<TestConversation> => {
      const tokens = { prompt: 0, completion: 0 }
      const count = (usage: LlmUsage) => {
        tokens.prompt += usage.prompt_tokens
        tokens.completion += usage.completion_tokens
      }
      let session: SessionView | null = null
      let callerTurns = 0

      const talk = Effect.gen(function*() {
        const connection = yield* starts.llmConnection(principal.organizationId).pipe(
          Effect.mapError((conflict) => new SimulationFailed(conflict.message))
        )
        session = yield* chats.create(principal, agentId, {
          initial_context: testCase.variables,
          use_draft: version === "draft",
          test: true
        }, silent).pipe(Effect.mapError((error) => new SimulationFailed(error.message)))
        const ref: SessionRef = { workflowId: agentId, runId: session.workflow_run_id }
        while (session.state === "running" && callerTurns < testCase.max_turns) {
          const answer = yield* ask(connection, {
            messages: callerMessages(testCase.persona, testCase.variables, session.transcript),
            schemaName: callerSchemaName,
            jsonSchema: callerJsonSchema
          }, "simulated caller")
          count(answer.usage)
          const turn = callerTurnOf(answer.value)
          if (turn === null) {
            return yield* Effect.fail(new SimulationFailed("The simulated caller's model did not answer as asked"))
          }
          if (turn.message !== "") {
            callerTurns += 1
            session = yield* chats.send(principal, ref, turn.message, silent).pipe(
              Effect.catchTag("UpstreamFailed", (failure) =>
                Effect.flatMap(
                  chats.get(principal, ref),
                  (ended) => (session = ended, Effect.fail(new SimulationFailed(failure.message)))
                )),
              Effect.mapError((error) =>
                error instanceof SimulationFailed ? error : new SimulationFailed(error.message)
              )
            )
          }
          if (turn.hangUp) break
        }
        if (session.state === "running") {
          session = yield* chats.end(principal, ref).pipe(
            Effect.mapError((error) => new SimulationFailed(error.message))
          )
        }
        return session
      })

      const judged = (ended: SessionView) =>
        Effect.gen(function*() {
          const observed = {
            transcript: ended.transcript,
            nodes: visitedNodes(ended.transcript, ended.node_id),
            variables: ended.gathered_context,
            disposition: dispositionOf(ended.gathered_context),
            callerTurns
          }
          const failures = [...failedExpectations(testCase.expectations, observed)]
          const criteria = testCase.expectations.criteria ?? []
          // The judge is asked only when the rules hold: a conversation already failed needs no grade.
          if (failures.length === 0 && criteria.length > 0) {
            const connection = yield* starts.llmConnection(principal.organizationId).pipe(
              Effect.mapError((conflict) => new SimulationFailed(conflict.message))
            )
            const verdict = yield* ask(connection, {
              messages: judgeMessages(criteria, ended.transcript),
              schemaName: judgeSchemaName,
              jsonSchema: judgeJsonSchema
            }, "judge")
            count(verdict.usage)
            for (const result of verdictsOf(criteria, verdict.value)) {
              if (!result.passed) {
                failures.push({ expectation: "criteria", reason: `"${result.criterion}": ${result.reason}` })
              }
            }
          }
          return { observed, failures }
        })

      const resultOf = (
        ended: SessionView | null,
        outcome: { readonly failures: TestConversation["failed_expectations"]; readonly nodes: ReadonlyArray<string> },
        error: string | null
      ): TestConversation => ({
        test_id: testCase.id,
        version,
        repetition,
        conversation_id: ended?.workflow_run_id ?? null,
        passed: error === null && outcome.failures.length === 0,
        caller_turns: callerTurns,
        end_reason: ended?.end_reason ?? null,
        disposition: ended ? dispositionOf(ended.gathered_context) : null,
        nodes_visited: outcome.nodes,
        failed_expectations: outcome.failures,
        error,
        transcript: ended?.transcript ?? []
      })

      return talk.pipe(
        Effect.flatMap((ended) =>
          judged(ended).pipe(
            Effect.map(({ failures, observed }) => resultOf(ended, { failures, nodes: observed.nodes }, null))
          )
        ),
        Effect.catchAll((failure) =>
          Effect.gen(function*() {
            const held: SessionView | null = session
            // A conversation the caller's side gave up on is ended, not left for the idle sweeper.
            const ended = held !== null && held.state === "running"
              ? yield* chats.end(principal, { workflowId: agentId, runId: held.workflow_run_id }).pipe(
                Effect.orElseSucceed(() => held)
              )
              : held
            const nodes = ended ? visitedNodes(ended.transcript, ended.node_id) : []
            return resultOf(ended, { failures: [], nodes }, failure.message)
          })
        ),
        Effect.tap((result) =>
          result.conversation_id === null || tokens.prompt + tokens.completion === 0
            ? Effect.void
            : rows.addTokens(principal.organizationId, result.conversation_id, tokens.prompt, tokens.completion)
        ),
        Effect.withSpan("AgentTestRuns.conversation", {
          attributes: { test_id: testCase.id, organization_id: principal.organizationId, version, repetition }
        })
      )
    }

    return { hold }
  })
