import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AgentTestRuns, AgentTests } from "../../../services/AgentTests.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"
import { pagination } from "../envelopes.ts"

const data = <A>(value: A) => ({ data: value })

export const AgentTestsHandlers = HttpApiBuilder.group(Api, "agentTests", (handlers) =>
  Effect.gen(function*() {
    const tests = yield* AgentTests
    const runs = yield* AgentTestRuns
    const read = requireScope("tests:read")
    const write = requireScope("tests:write")
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(read, (principal) =>
          tests.list(principal, path.agent_id, urlParams.page, urlParams.page_size)).pipe(
            Effect.map(({ items, total }) => ({
              data: items,
              pagination: pagination(urlParams.page, urlParams.page_size, total)
            }))
          ))
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(write, (principal) =>
          tests.create(principal, path.agent_id, payload)).pipe(Effect.map(data)))
      .handle("get", ({ path }) =>
        Effect.flatMap(read, (principal) =>
          tests.get(principal, path.agent_id, path.test_id)).pipe(Effect.map(data)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(write, (principal) =>
          tests.update(principal, path.agent_id, path.test_id, payload)).pipe(Effect.map(data)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(write, (principal) =>
          tests.remove(principal, path.agent_id, path.test_id)).pipe(Effect.as({})))
      .handle("propose", ({ path }) =>
        Effect.flatMap(read, (principal) =>
          tests.propose(principal, path.agent_id)).pipe(Effect.map(data)))
      .handle("startRun", ({ path, payload }) =>
        Effect.flatMap(write, (principal) =>
          runs.start(principal, path.agent_id, payload)).pipe(Effect.map(data)))
      .handle("listRuns", ({ path, urlParams }) =>
        Effect.flatMap(read, (principal) =>
          runs.list(principal, path.agent_id, urlParams.page, urlParams.page_size)).pipe(
            Effect.map(({ items, total }) => ({
              data: items,
              pagination: pagination(urlParams.page, urlParams.page_size, total)
            }))
          ))
      .handle("getRun", ({ path }) =>
        Effect.flatMap(read, (principal) =>
          runs.get(principal, path.agent_id, path.run_id)).pipe(Effect.map(data)))
  }))
