import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Tools } from "../../../services/Tools.ts"
import type { ToolStatus } from "../../../src/tools/toolDefinition.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"
import { testResponse } from "./testResponse.ts"

const read = requireScope("agents:read")
/** Tools are part of agents: every member builds them, as every member builds agents. */
const write = requireScope("agents:write")

export const ToolsHandlers = HttpApiBuilder.group(
  Api,
  "tools",
  (handlers) =>
    Effect.gen(function*() {
      const tools = yield* Tools
      return handlers
        .handle("list", ({ urlParams }) =>
          Effect.flatMap(read, (principal) =>
            tools.list(principal, (urlParams.status?.split(",") ?? ["active"]) as ReadonlyArray<ToolStatus>)))
        .handle("create", ({ payload }) =>
          Effect.flatMap(write, (principal) =>
            tools.create(principal, payload)))
        .handle("get", ({ path }) => Effect.flatMap(read, (principal) => tools.get(principal, path.tool_uuid)))
        .handle(
          "update",
          ({ path, payload }) => Effect.flatMap(write, (principal) => tools.update(principal, path.tool_uuid, payload))
        )
        .handle("archive", ({ path }) =>
          Effect.flatMap(write, (principal) =>
            tools.setStatus(principal, path.tool_uuid, "archived")).pipe(
              Effect.map((tool) => ({ status: "archived" as const, tool_uuid: tool.tool_uuid }))
            ))
        .handle(
          "unarchive",
          ({ path }) =>
            Effect.flatMap(write, (principal) =>
              tools.setStatus(principal, path.tool_uuid, "active"))
        )
        .handle("test", ({ path, payload }) =>
          Effect.flatMap(write, (principal) =>
            tools.test(principal, path.tool_uuid, payload)).pipe(
              Effect.map(testResponse)
            ))
        .handle("refreshMcp", ({ path }) =>
          Effect.flatMap(write, (principal) =>
            tools.refreshMcp(principal, path.tool_uuid)))
    })
)
