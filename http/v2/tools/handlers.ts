import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Tools } from "../../../services/Tools.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"
import { testResponse } from "../../v1/tools/testResponse.ts"
import { pagination } from "../envelopes.ts"

const data = <A>(value: A) => ({ data: value })

export const V2ToolsHandlers = HttpApiBuilder.group(Api, "v2tools", (handlers) =>
  Effect.gen(function*() {
    const tools = yield* Tools
    const read = requireScope("agents:read")
    const write = requireScope("agents:write")
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(read, (principal) =>
          tools.list(principal, ["active", "archived"])).pipe(
            Effect.map((all) => {
              const start = (urlParams.page - 1) * urlParams.page_size
              return {
                data: all.slice(start, start + urlParams.page_size),
                pagination: pagination(urlParams.page, urlParams.page_size, all.length)
              }
            })
          ))
      .handle("create", ({ payload }) =>
        Effect.flatMap(write, (principal) =>
          tools.create(principal, payload)).pipe(Effect.map(data)))
      .handle("get", ({ path }) =>
        Effect.flatMap(read, (principal) =>
          tools.get(principal, path.tool_uuid)).pipe(Effect.map(data)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(write, (principal) =>
          tools.update(principal, path.tool_uuid, payload)).pipe(Effect.map(data)))
      .handle("archive", ({ path }) =>
        Effect.flatMap(write, (principal) =>
          tools.setStatus(principal, path.tool_uuid, "archived")).pipe(
            Effect.map(data)
          ))
      .handle("unarchive", ({ path }) =>
        Effect.flatMap(write, (principal) =>
          tools.setStatus(principal, path.tool_uuid, "active")).pipe(
            Effect.map(data)
          ))
      .handle("test", ({ path, payload }) =>
        Effect.flatMap(write, (principal) =>
          tools.test(principal, path.tool_uuid, payload)).pipe(
            Effect.map((outcome) =>
              data(testResponse(outcome))
            )
          ))
      .handle("refreshMcp", ({ path }) =>
        Effect.flatMap(write, (principal) =>
          tools.refreshMcp(principal, path.tool_uuid)).pipe(Effect.map(data)))
  }))
