import { Clock, Effect, FiberMap, Layer, Schedule } from "effect"
import { AgentTestRuns } from "../../services/AgentTests.ts"
import type { CreateTestRunRequest } from "../../src/agentTests/testRunRecord.ts"
import { NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { WorkflowId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { makeSimulatedConversation } from "./simulatedConversation.ts"
import { makeTestCaseRows } from "./testCaseRows.ts"
import { makeTestRunRows, type TestRunPlan, versionsOf } from "./testRunRows.ts"

/** Conversations one process holds at once over all test runs, whatever each run asks. */
const PROCESS_CONVERSATIONS = 20
/** Conversations one run may ask for (cases × repetitions × versions). */
const RUN_CONVERSATIONS = 1000

/** How often a process beats for the runs it holds, and sweeps runs whose process stopped. */
const HEARTBEAT_SECONDS = 10
/** A run this long without a beat is abandoned: several beats missed, never a slow one. */
const ABANDONED_AFTER_SECONDS = 60

const voiceOf = (plan: TestRunPlan) => plan.mode === "voice" ? { speed: plan.voice_speed ?? 1 } : null

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

export const AgentTestRunsLive = Layer.scoped(
  AgentTestRuns,
  Effect.gen(function*() {
    const cases = yield* makeTestCaseRows
    const rows = yield* makeTestRunRows
    const conversations = yield* makeSimulatedConversation(rows)
    const slots = yield* Effect.makeSemaphore(PROCESS_CONVERSATIONS)
    const running = yield* FiberMap.make<number>()
    const held = new Set<number>()

    yield* Effect.suspend(() => Effect.all([rows.beat([...held]), rows.failAbandoned(ABANDONED_AFTER_SECONDS)])).pipe(
      Effect.catchAllCause((cause) => Effect.logError("Agent test run heartbeat failed", cause)),
      Effect.repeat(Schedule.spaced(`${HEARTBEAT_SECONDS} seconds`)),
      Effect.forkScoped
    )

    /** Holds every conversation of the run, storing each as it finishes so a poll shows progress. */
    const execute = (principal: Principal, agentId: WorkflowId, runId: number, plan: TestRunPlan) => {
      const jobs = versionsOf(plan).flatMap((version) =>
        plan.cases.flatMap((testCase) =>
          Array.from({ length: plan.repetitions }, (_, index) => ({ testCase, version, repetition: index + 1 }))
        )
      )
      return Effect.gen(function*() {
        held.add(runId)
        yield* rows.markRunning(runId, yield* now)
        yield* Effect.forEach(
          jobs,
          (job) =>
            slots.withPermits(1)(
              conversations.hold(principal, agentId, job.testCase, job.version, job.repetition, voiceOf(plan))
            )
              .pipe(Effect.flatMap((result) => rows.addResult(runId, result))),
          { concurrency: plan.concurrency, discard: true }
        )
        yield* rows.finish(runId, "completed", null, yield* now)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logError("Agent test run failed", cause).pipe(
            Effect.zipRight(now),
            Effect.flatMap((at) => rows.finish(runId, "failed", "The test run stopped unexpectedly", at))
          )
        ),
        Effect.onInterrupt(() =>
          Effect.flatMap(
            now,
            (at) => rows.finish(runId, "failed", "The server stopped during the test run", at)
          )
        ),
        Effect.ensuring(Effect.sync(() => held.delete(runId))),
        Effect.withSpan("AgentTestRuns.execute", {
          attributes: { test_run_id: runId, organization_id: principal.organizationId }
        })
      )
    }

    const start = Effect.fn("AgentTestRuns.start")(
      function*(principal: Principal, agentId: WorkflowId, request: CreateTestRunRequest) {
        if (!(yield* cases.agentExists(principal.organizationId, agentId))) {
          return yield* Effect.fail(new NotFound({ resource: "Agent", id: agentId }))
        }
        const chosen = yield* cases.some(principal.organizationId, agentId, request.test_ids)
        const missing = (request.test_ids ?? []).filter((id) => !chosen.some((testCase) => testCase.id === id))
        if (missing.length > 0) {
          return yield* Effect.fail(
            ValidationFailed.single(["body", "test_ids"], `No test case ${missing.join(", ")} on this agent`)
          )
        }
        if (chosen.length === 0) {
          return yield* Effect.fail(
            ValidationFailed.single(["body", "test_ids"], "The agent has no test cases; add one first")
          )
        }
        const plan: TestRunPlan = {
          version: request.version,
          compare_with: request.compare_with ?? null,
          repetitions: request.repetitions,
          concurrency: request.concurrency,
          pass_threshold: request.pass_threshold,
          mode: request.mode,
          ...(request.mode === "voice" ? { voice_speed: request.voice_speed } : {}),
          cases: chosen,
          draft_fingerprint: request.version === "draft" ? yield* rows.draftFingerprint(agentId) : null
        }
        const total = chosen.length * plan.repetitions * versionsOf(plan).length
        if (total > RUN_CONVERSATIONS) {
          return yield* Effect.fail(
            ValidationFailed.single(
              ["body", "repetitions"],
              `This run would hold ${total} conversations; at most ${RUN_CONVERSATIONS} are allowed`
            )
          )
        }
        const run = yield* rows.insert(principal.organizationId, agentId, plan, yield* now)
        yield* FiberMap.run(running, run.id, execute(principal, agentId, run.id, plan))
        return run
      }
    )

    const get = Effect.fn("AgentTestRuns.get")(function*(principal: Principal, agentId: WorkflowId, runId: number) {
      const run = yield* rows.one(principal.organizationId, agentId, runId)
      return run ?? (yield* Effect.fail(new NotFound({ resource: "Test run", id: runId })))
    })

    const list = Effect.fn("AgentTestRuns.list")(
      function*(principal: Principal, agentId: WorkflowId, page: number, pageSize: number) {
        if (!(yield* cases.agentExists(principal.organizationId, agentId))) {
          return yield* Effect.fail(new NotFound({ resource: "Agent", id: agentId }))
        }
        return yield* rows.page(principal.organizationId, agentId, pageSize, (page - 1) * pageSize)
      }
    )

    return AgentTestRuns.of({ start, get, list })
  })
)
