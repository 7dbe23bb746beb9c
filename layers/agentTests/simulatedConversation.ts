import { Effect, Option } from "effect"
import { ChatSessions, type SessionRef, type SessionView } from "../../services/ChatSessions.ts"
import { ConversationStarts } from "../../services/ConversationStarts.ts"
import { type LlmConnection, LlmGenerator, type LlmUsage } from "../../services/LlmGenerator.ts"
import { ModelSettings } from "../../services/ModelSettings.ts"
import { TextToSpeech } from "../../services/TextToSpeech.ts"
import { VoiceCalls } from "../../services/VoiceCalls.ts"
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
import type { TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { RunId, WorkflowId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { type HeardTurn, holdVoiceCall } from "./simulatedVoiceCaller.ts"
import { makeSimulationClock } from "./simulationClock.ts"
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

/** A conversation as the checks read it, from a chat session or a stored call. */
interface Held {
  readonly conversationId: RunId
  readonly running: boolean
  readonly transcript: ReadonlyArray<TranscriptTurn>
  readonly nodeId: string | null
  readonly gatheredContext: Readonly<Record<string, unknown>>
  readonly endReason: string | null
  readonly deadAirMs: ReadonlyArray<number> | null
}

const heldChat = (session: SessionView): Held => ({
  conversationId: session.workflow_run_id,
  running: session.state === "running",
  transcript: session.transcript,
  nodeId: session.node_id,
  gatheredContext: session.gathered_context,
  endReason: session.end_reason,
  deadAirMs: null
})

const dispositionOf = (context: Readonly<Record<string, unknown>>) => {
  const value = context.mapped_call_disposition ?? context.call_disposition
  return typeof value === "string" && value !== "" ? value : null
}

/**
 * One conversation of a test case: the agent through the text chat channel (the real engine, as a
 * `testchat` run) or a voice call (the real call path on an in-process line, as a `testcall` run),
 * and the simulated caller through the organization's LLM (and in a call its TTS), turn by turn
 * until either ends it or the case's turn limit; then the rule checks and, when they hold, the judge.
 */
export const makeSimulatedConversation = (rows: TestRunRows) =>
  Effect.gen(function*() {
    const chats = yield* ChatSessions
    const starts = yield* ConversationStarts
    const generator = yield* LlmGenerator
    const voiceCalls = yield* VoiceCalls
    const modelSettings = yield* ModelSettings
    const textToSpeech = yield* TextToSpeech

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
      repetition: number,
      voice: { readonly speed: number } | null
    ): Effect.Effect<TestConversation> => {
      const tokens = { prompt: 0, completion: 0 }
      const count = (usage: LlmUsage) => {
        tokens.prompt += usage.prompt_tokens
        tokens.completion += usage.completion_tokens
      }
      /** The conversation so far: set once it exists, so a failure still reports what was said. */
      let held: Held | null = null
      let callerTurns = 0

      const nextCallerTurn = (connection: LlmConnection, transcript: ReadonlyArray<HeardTurn>) =>
        Effect.gen(function*() {
          const answer = yield* ask(connection, {
            messages: callerMessages(testCase.persona, testCase.variables, transcript),
            schemaName: callerSchemaName,
            jsonSchema: callerJsonSchema
          }, "simulated caller")
          count(answer.usage)
          const turn = callerTurnOf(answer.value)
          if (turn === null) {
            return yield* Effect.fail(new SimulationFailed("The simulated caller's model did not answer as asked"))
          }
          return turn
        })

      const callerConnection = starts.llmConnection(principal.organizationId).pipe(
        Effect.mapError((conflict) => new SimulationFailed(conflict.message))
      )

      const chatted = Effect.gen(function*() {
        const connection = yield* callerConnection
        let session: SessionView = yield* chats.create(principal, agentId, {
          initial_context: testCase.variables,
          use_draft: version === "draft",
          test: true
        }, silent).pipe(Effect.mapError((error) => new SimulationFailed(error.message)))
        held = heldChat(session)
        const ref: SessionRef = { workflowId: agentId, runId: session.workflow_run_id }
        while (session.state === "running" && callerTurns < testCase.max_turns) {
          const turn = yield* nextCallerTurn(connection, session.transcript)
          if (turn.message !== "") {
            callerTurns += 1
            session = yield* chats.send(principal, ref, turn.message, silent).pipe(
              Effect.catchTag("UpstreamFailed", (failure) =>
                Effect.flatMap(
                  chats.get(principal, ref),
                  (ended) => (held = heldChat(ended), Effect.fail(new SimulationFailed(failure.message)))
                )),
              Effect.mapError((error) =>
                error instanceof SimulationFailed ? error : new SimulationFailed(error.message)
              )
            )
            held = heldChat(session)
          }
          if (turn.hangUp) break
        }
        if (session.state === "running") {
          session = yield* chats.end(principal, ref).pipe(
            Effect.mapError((error) => new SimulationFailed(error.message))
          )
        }
        return heldChat(session)
      })

      const called = (speed: number) =>
        Effect.gen(function*() {
          const connection = yield* callerConnection
          const tts = yield* modelSettings.speechFor(principal.organizationId, "tts")
          const call = yield* voiceCalls.startTestCall(principal, agentId, {
            initial_context: testCase.variables,
            use_draft: version === "draft"
          }).pipe(Effect.mapError((error) => new SimulationFailed(error.message)))
          held = {
            conversationId: call.runId,
            running: true,
            transcript: [],
            nodeId: null,
            gatheredContext: {},
            endReason: null,
            deadAirMs: null
          }
          if (Option.isNone(tts)) {
            return yield* Effect.fail(new SimulationFailed("The organization has no TTS settings"))
          }
          const clock = makeSimulationClock(speed)
          const outcome = yield* holdVoiceCall({
            call,
            clock,
            textToSpeech,
            tts: tts.value,
            maxTurns: testCase.max_turns,
            // Cases stored in runs from before the setting have none.
            interrupts: testCase.interrupts === true,
            nextTurn: (heard) => nextCallerTurn(connection, heard)
          }).pipe(Effect.withClock(clock.clock))
          callerTurns = outcome.callerTurns
          const ended = yield* rows.endedCall(principal.organizationId, call.runId)
          held = {
            conversationId: call.runId,
            running: ended === null || ended.state === "running" || ended.state === "initialized",
            transcript: ended?.transcript ?? [],
            nodeId: ended?.node_id ?? null,
            gatheredContext: ended?.gathered_context ?? {},
            endReason: ended?.end_reason ?? null,
            deadAirMs: outcome.deadAirMs
          }
          if (held.running) {
            return yield* Effect.fail(new SimulationFailed("The call did not end after the caller hung up"))
          }
          return held
        })

      const talk = voice === null ? chatted : called(voice.speed)

      const judged = (ended: Held) =>
        Effect.gen(function*() {
          const observed = {
            transcript: ended.transcript,
            nodes: visitedNodes(ended.transcript, ended.nodeId),
            variables: ended.gatheredContext,
            disposition: dispositionOf(ended.gatheredContext),
            callerTurns,
            deadAirMs: ended.deadAirMs
          }
          const failures = [...failedExpectations(testCase.expectations, observed)]
          const criteria = testCase.expectations.criteria ?? []
          // The judge is asked only when the rules hold: a conversation already failed needs no grade.
          if (failures.length === 0 && criteria.length > 0) {
            const verdict = yield* ask(yield* callerConnection, {
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
        ended: Held | null,
        outcome: { readonly failures: TestConversation["failed_expectations"]; readonly nodes: ReadonlyArray<string> },
        error: string | null
      ): TestConversation => ({
        test_id: testCase.id,
        version,
        repetition,
        conversation_id: ended?.conversationId ?? null,
        passed: error === null && outcome.failures.length === 0,
        caller_turns: callerTurns,
        dead_air_ms: ended?.deadAirMs ?? null,
        end_reason: ended?.endReason ?? null,
        disposition: ended ? dispositionOf(ended.gatheredContext) : null,
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
            const sofar: Held | null = held
            // A chat the caller's side gave up on is ended, not left for the idle sweeper (a call
            // ends when its line closes).
            const ended = sofar !== null && sofar.running && voice === null
              ? yield* chats.end(principal, { workflowId: agentId, runId: sofar.conversationId }).pipe(
                Effect.map(heldChat),
                Effect.orElseSucceed(() => sofar)
              )
              : sofar
            const nodes = ended ? visitedNodes(ended.transcript, ended.nodeId) : []
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
