import { Clock, Effect, Layer } from "effect"
import { AgentTests } from "../../services/AgentTests.ts"
import { proposeCases } from "../../src/agentTests/caseProposals.ts"
import {
  type CreateTestCaseRequest,
  expectationProblems,
  type UpdateTestCaseRequest
} from "../../src/agentTests/testCase.ts"
import { NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { WorkflowId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { requiredVariables } from "../../src/graph/templateVariables.ts"
import { validateDefinition } from "../../src/graph/validation.ts"
import { type CaseContent, makeTestCaseRows } from "./testCaseRows.ts"

const agentNotFound = (agentId: number) => new NotFound({ resource: "Agent", id: agentId })
const testNotFound = (testId: number) => new NotFound({ resource: "Test case", id: testId })

const checked = (content: CaseContent) => {
  const problems = expectationProblems(content.expectations)
  return problems.length === 0 ? Effect.succeed(content) : Effect.fail(
    new ValidationFailed({
      message: problems.join("; "),
      problems: problems.map((msg) => ({ loc: ["body", "expectations"], msg, type: "value_error" }))
    })
  )
}

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

export const AgentTestsLive = Layer.effect(
  AgentTests,
  Effect.gen(function*() {
    const rows = yield* makeTestCaseRows

    const requireAgent = (principal: Principal, agentId: WorkflowId) =>
      Effect.flatMap(
        rows.agentExists(principal.organizationId, agentId),
        (exists) => (exists ? Effect.void : Effect.fail(agentNotFound(agentId)))
      )

    const list = Effect.fn("AgentTests.list")(
      function*(principal: Principal, agentId: WorkflowId, page: number, pageSize: number) {
        yield* requireAgent(principal, agentId)
        return yield* rows.page(principal.organizationId, agentId, pageSize, (page - 1) * pageSize)
      }
    )

    const create = Effect.fn("AgentTests.create")(
      function*(principal: Principal, agentId: WorkflowId, input: CreateTestCaseRequest) {
        yield* requireAgent(principal, agentId)
        const content = yield* checked(input)
        return yield* rows.insert(principal.organizationId, agentId, content, yield* now)
      }
    )

    const get = Effect.fn("AgentTests.get")(function*(principal: Principal, agentId: WorkflowId, testId: number) {
      const found = yield* rows.one(principal.organizationId, agentId, testId)
      return found ?? (yield* Effect.fail(testNotFound(testId)))
    })

    const update = Effect.fn("AgentTests.update")(
      function*(principal: Principal, agentId: WorkflowId, testId: number, patch: UpdateTestCaseRequest) {
        const current = yield* get(principal, agentId, testId)
        const content = yield* checked({
          name: patch.name ?? current.name,
          persona: patch.persona ?? current.persona,
          variables: patch.variables ?? current.variables,
          max_turns: patch.max_turns ?? current.max_turns,
          expectations: patch.expectations ?? current.expectations,
          interrupts: patch.interrupts ?? current.interrupts
        })
        const updated = yield* rows.replace(principal.organizationId, agentId, testId, content, yield* now)
        return updated ?? (yield* Effect.fail(testNotFound(testId)))
      }
    )

    const remove = Effect.fn("AgentTests.remove")(function*(principal: Principal, agentId: WorkflowId, testId: number) {
      const removed = yield* rows.remove(principal.organizationId, agentId, testId)
      if (!removed) return yield* Effect.fail(testNotFound(testId))
    })

    const propose = Effect.fn("AgentTests.propose")(function*(principal: Principal, agentId: WorkflowId) {
      const latest = yield* rows.latestDefinition(principal.organizationId, agentId)
      if (!latest) return yield* Effect.fail(agentNotFound(agentId))
      const { graph } = validateDefinition(latest.workflow_definition)
      if (!graph) {
        return yield* ValidationFailed.single(
          ["path", "agent_id"],
          "The agent's definition has problems (GET /api/v1/workflow/{id}/validate lists them); fix them before proposing test cases",
          "definition_invalid"
        )
      }
      return proposeCases(latest.name, graph, requiredVariables(latest.workflow_definition))
    })

    return AgentTests.of({ list, create, get, update, remove, propose })
  })
)
