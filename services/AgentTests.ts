import { Context, type Effect } from "effect"
import type { CreateTestCaseRequest, TestCase, UpdateTestCaseRequest } from "../src/agentTests/testCase.ts"
import type { CreateTestRunRequest, TestRun } from "../src/agentTests/testRunRecord.ts"
import type { Conflict, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

/** An agent's test cases: simulated callers with expectations. Scoped to the caller's organization. */
export interface AgentTestsShape {
  readonly list: (
    principal: Principal,
    agentId: WorkflowId,
    page: number,
    pageSize: number
  ) => Effect.Effect<Page<TestCase>, NotFound>
  readonly create: (
    principal: Principal,
    agentId: WorkflowId,
    input: CreateTestCaseRequest
  ) => Effect.Effect<TestCase, NotFound | ValidationFailed>
  readonly get: (principal: Principal, agentId: WorkflowId, testId: number) => Effect.Effect<TestCase, NotFound>
  readonly update: (
    principal: Principal,
    agentId: WorkflowId,
    testId: number,
    patch: UpdateTestCaseRequest
  ) => Effect.Effect<TestCase, NotFound | ValidationFailed>
  readonly remove: (principal: Principal, agentId: WorkflowId, testId: number) => Effect.Effect<void, NotFound>
  /** A case set covering every transition of the agent's latest definition, for a person to edit (not stored). */
  readonly propose: (
    principal: Principal,
    agentId: WorkflowId
  ) => Effect.Effect<ReadonlyArray<CreateTestCaseRequest>, NotFound | ValidationFailed>
}

export class AgentTests extends Context.Tag("talkgraph/AgentTests")<AgentTests, AgentTestsShape>() {}

/**
 * Test runs: an agent's cases played by simulated callers through the text chat engine, in the
 * background, with bounded concurrency. A run is polled until it is completed or failed.
 */
export interface AgentTestRunsShape {
  readonly start: (
    principal: Principal,
    agentId: WorkflowId,
    request: CreateTestRunRequest
  ) => Effect.Effect<TestRun, NotFound | ValidationFailed | Conflict>
  readonly get: (principal: Principal, agentId: WorkflowId, runId: number) => Effect.Effect<TestRun, NotFound>
  readonly list: (
    principal: Principal,
    agentId: WorkflowId,
    page: number,
    pageSize: number
  ) => Effect.Effect<Page<TestRun>, NotFound>
}

export class AgentTestRuns extends Context.Tag("talkgraph/AgentTestRuns")<AgentTestRuns, AgentTestRunsShape>() {}
