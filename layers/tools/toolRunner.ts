import { Clock, Effect, Layer } from "effect"
import { Credentials } from "../../services/Credentials.ts"
import { McpServers } from "../../services/McpServers.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { type ToolCallInput, ToolRunner } from "../../services/ToolRunner.ts"
import { evaluate } from "../../src/tools/calculator.ts"
import { timeIn } from "../../src/tools/currentTime.ts"
import { argumentsObjectOf } from "../../src/tools/toolArguments.ts"
import { DEFAULT_RESULT_CHARS, isTimeZone, type McpConfig } from "../../src/tools/toolDefinition.ts"
import { truncatedForModel } from "../../src/tools/toolResult.ts"
import { failedOutcome, type ToolOutcome } from "../../src/tools/toolRun.ts"
import { DEFAULT_RESOLVER_TIMEOUT_MS, resolvedDestination, resolverParameters } from "../../src/tools/transferCall.ts"
import { callHttpTool } from "./httpToolCall.ts"

const succeeded = (result: unknown): ToolOutcome => ({
  status: "success",
  result: JSON.stringify(result),
  truncated: false,
  latency_ms: 0,
  status_code: null,
  request: null,
  data: result
})

export const ToolRunnerLive = Layer.effect(
  ToolRunner,
  Effect.gen(function*() {
    const outbound = yield* OutboundHttp
    const credentials = yield* Credentials
    const mcp = yield* McpServers

    /** One call of a tool of an MCP server: its answer, or its error, cut to what the model reads. */
    const callMcpTool = (input: ToolCallInput, config: McpConfig): Effect.Effect<ToolOutcome> =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - started)
        const tool = input.tool.mcpTool
        if (!tool) return failedOutcome("name one of the MCP server's tools to call", 0)
        const args = argumentsObjectOf(input.arguments)
        if (args === null) return failedOutcome("the arguments must be a JSON object", 0)
        const answer = yield* mcp.call(input.organizationId, config, tool.name, args).pipe(Effect.either)
        const latency = yield* elapsed
        if (answer._tag === "Left") {
          yield* Effect.logInfo("MCP tool call failed").pipe(
            Effect.annotateLogs({ tool_uuid: input.tool.uuid, mcp_tool: tool.name, latency_ms: latency })
          )
          return failedOutcome(answer.left.message, latency)
        }
        const fitted = truncatedForModel(answer.right.text, config.max_result_chars ?? DEFAULT_RESULT_CHARS)
        return {
          status: answer.right.isError ? "error" : "success",
          result: answer.right.isError ? `Error: the tool answered: ${fitted.text}` : fitted.text,
          truncated: fitted.truncated,
          latency_ms: latency,
          status_code: null,
          request: null,
          data: answer.right.text
        } satisfies ToolOutcome
      })

    const builtIn = (input: ToolCallInput): Effect.Effect<ToolOutcome> =>
      Effect.gen(function*() {
        const args = argumentsObjectOf(input.arguments)
        if (args === null) return failedOutcome("the arguments must be a JSON object", 0)
        const { definition } = input.tool
        switch (definition.type) {
          case "calculator": {
            const expression = args["expression"]
            if (typeof expression !== "string") return failedOutcome("\"expression\" (a string) is required", 0)
            const value = evaluate(expression)
            return value.ok
              ? succeeded({ expression, result: value.value })
              : failedOutcome(`the expression cannot be evaluated: ${value.error}`, 0)
          }
          case "current_time": {
            const zone = typeof args["timezone"] === "string" && args["timezone"] !== ""
              ? args["timezone"]
              : definition.config.timezone ?? "UTC"
            if (!isTimeZone(zone)) return failedOutcome(`"${zone}" is not a time zone such as Europe/Paris`, 0)
            return succeeded(timeIn(yield* Clock.currentTimeMillis, zone))
          }
          default:
            return failedOutcome(`${definition.type} tools cannot be run this way`, 0)
        }
      })

    const run = Effect.fn("ToolRunner.run")(function*(input: ToolCallInput) {
      yield* Effect.annotateCurrentSpan({ tool_uuid: input.tool.uuid, tool_type: input.tool.definition.type })
      const { definition } = input.tool
      return definition.type === "http_api"
        ? yield* callHttpTool(outbound, credentials, input, definition.config)
        : definition.type === "mcp"
        ? yield* callMcpTool(input, definition.config)
        : yield* builtIn(input)
    })

    const resolveTransfer = Effect.fn("ToolRunner.resolveTransfer")(function*(input: ToolCallInput) {
      yield* Effect.annotateCurrentSpan({ tool_uuid: input.tool.uuid })
      const { definition } = input.tool
      const resolver = definition.type === "transfer_call" ? definition.config.resolver : null
      if (definition.type !== "transfer_call" || !resolver) {
        return { error: "this transfer has no resolver to ask for its destination" }
      }
      // Dograh's resolver is a POST of the model's arguments, sent like any HTTP tool's request.
      const outcome = yield* callHttpTool(outbound, credentials, input, {
        method: "POST",
        url: resolver.url,
        headers: resolver.headers ?? null,
        credential_uuid: resolver.credential_uuid ?? null,
        parameters: resolverParameters(definition.config),
        timeout_ms: resolver.timeout_ms ?? DEFAULT_RESOLVER_TIMEOUT_MS
      })
      if (outcome.status !== "success") {
        return { error: `the transfer resolver failed: ${outcome.result.replace(/^Error: /, "")}` }
      }
      return resolvedDestination(outcome.data)
    })

    return ToolRunner.of({ run, resolveTransfer })
  })
)
