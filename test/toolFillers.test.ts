import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import { ConversationEngineLive } from "../layers/conversation/conversationEngine.ts"
import { ConversationEngine, type ConversationPlan } from "../services/ConversationEngine.ts"
import { DoNotCall } from "../services/DoNotCall.ts"
import { KnowledgeBase } from "../services/KnowledgeBase.ts"
import { LlmChat, type ModelReply } from "../services/LlmChat.ts"
import { LlmGenerator } from "../services/LlmGenerator.ts"
import { ToolRunner } from "../services/ToolRunner.ts"
import { initialState } from "../src/conversation/conversationState.ts"
import { limitsFrom } from "../src/conversation/limits.ts"
import { OrganizationId } from "../src/domain/ids.ts"
import { validateDefinition } from "../src/graph/validation.ts"
import type { ToolDefinition } from "../src/tools/toolDefinition.ts"
import type { RunnableTool } from "../src/tools/toolRun.ts"

// The engine with a scripted model and a runner whose tools take a set time on the test clock:
// what a voice call hears while a slow tool runs, and what a caller's interruption does to a call.

const httpTool = (uuid: string, name: string, method: "GET" | "POST", filler?: string | null): RunnableTool => ({
  uuid,
  name,
  description: name,
  definition: {
    type: "http_api",
    config: {
      method,
      url: "https://api.example.com/x",
      ...(filler === undefined ? {} : { filler_message: filler })
    }
  } as ToolDefinition
})

const graph = (uuids: ReadonlyArray<string>) =>
  validateDefinition({
    nodes: [
      { id: "start", type: "startCall", data: { name: "Start", prompt: "Help.", tool_uuids: uuids } },
      { id: "end", type: "endCall", data: { name: "End", prompt: "Bye." } }
    ],
    edges: [{ id: "e", source: "start", target: "end", data: { label: "Done", condition: "Done" } }]
  }).graph!

const setup = (tools: ReadonlyArray<RunnableTool>, replies: Array<ModelReply>, took: Record<string, number>) => {
  const finished: Array<string> = []
  const interrupted: Array<string> = []
  const layer = ConversationEngineLive.pipe(
    Layer.provide(Layer.mergeAll(
      Layer.succeed(LlmChat, {
        reply: (_request, onText) =>
          Effect.suspend(() => {
            const next = replies.shift()!
            return Effect.as(next.text ? onText(next.text) : Effect.void, next)
          })
      }),
      Layer.succeed(LlmGenerator, { generateStructured: () => Effect.die("not used") } as any),
      Layer.succeed(KnowledgeBase, { search: () => Effect.die("not used") } as any),
      Layer.succeed(DoNotCall, { record: () => Effect.die("not used") } as any),
      Layer.succeed(ToolRunner, {
        resolveTransfer: () => Effect.die("not used"),
        run: (input) =>
          Effect.sleep(took[input.tool.name] ?? 0).pipe(
            Effect.tap(() => Effect.sync(() => finished.push(input.tool.name))),
            Effect.onInterrupt(() => Effect.sync(() => interrupted.push(input.tool.name))),
            Effect.as({
              status: "success" as const,
              result: "{\"ok\":true}",
              truncated: false,
              latency_ms: took[input.tool.name] ?? 0,
              status_code: 200,
              request: null,
              data: null
            })
          )
      })
    ))
  )
  const plan: ConversationPlan = {
    graph: graph(tools.map((tool) => tool.uuid)),
    context: {},
    connection: { provider: "openai", model: "m", apiKey: null, baseUrl: null },
    limits: limitsFrom(null, { llmTimeoutSeconds: 30, idleTimeoutSeconds: 60 }),
    dispositionCodes: [],
    toolFillerAfterMs: 700,
    tools: { organizationId: OrganizationId.make(1), byUuid: new Map(tools.map((tool) => [tool.uuid, tool])) }
  }
  return { layer, plan, finished, interrupted }
}

const toolCall = (name: string, id = `call_${name}`) => ({ id, name, arguments: "{}" })
const usage = { prompt_tokens: 1, completion_tokens: 1 }

describe("tools in a voice call", () => {
  it.effect("says the tool's filler line once the answer takes longer than 700 ms, then the answer", () => {
    const slow = httpTool("t1", "look_up", "GET")
    const { layer, plan } = setup([slow], [
      { text: "Let me look.", toolCalls: [toolCall("look_up")], usage },
      { text: "It shipped.", toolCalls: [], usage }
    ], { look_up: 2000 })
    return Effect.gen(function*() {
      const engine = yield* ConversationEngine
      const emitted: Array<string> = []
      const step = yield* Effect.fork(
        engine.respond(plan, initialState("start"), [], "Where is it?", (text) => Effect.sync(() => emitted.push(text)))
      )
      yield* TestClock.adjust("699 millis")
      expect(emitted).toEqual(["Let me look."])
      yield* TestClock.adjust("1 millis")
      expect(emitted).toEqual(["Let me look.", "One moment, please."])
      yield* TestClock.adjust("2 seconds")
      const outcome = yield* Fiber.join(step)
      expect(emitted).toEqual(["Let me look.", "One moment, please.", "It shipped."])
      expect(outcome.turns.map((turn) => turn.text)).toEqual([
        "Where is it?",
        "Let me look. One moment, please.",
        "It shipped."
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("says nothing extra for a quick tool, or for one whose filler is turned off", () => {
    const quick = httpTool("t1", "quick", "GET")
    const silent = httpTool("t2", "silent", "GET", null)
    const { layer, plan } = setup([quick, silent], [
      { text: "", toolCalls: [toolCall("quick")], usage },
      { text: "", toolCalls: [toolCall("silent")], usage },
      { text: "Done.", toolCalls: [], usage }
    ], { quick: 300, silent: 3000 })
    return Effect.gen(function*() {
      const engine = yield* ConversationEngine
      const emitted: Array<string> = []
      const step = yield* Effect.fork(
        engine.respond(plan, initialState("start"), [], "Go", (text) => Effect.sync(() => emitted.push(text)))
      )
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(step)
      expect(emitted).toEqual(["Done."])
    }).pipe(Effect.provide(layer))
  })

  it.effect("lets a call that changes something finish when the caller cuts in, and aborts one that only reads", () => {
    const booking = httpTool("t1", "book", "POST")
    const lookup = httpTool("t2", "look_up", "GET")
    const { finished, interrupted, layer, plan } = setup([booking, lookup], [
      { text: "", toolCalls: [toolCall("book"), toolCall("look_up")], usage },
      { text: "Booked.", toolCalls: [], usage }
    ], { book: 1500, look_up: 1500 })
    return Effect.gen(function*() {
      const engine = yield* ConversationEngine
      const step = yield* Effect.fork(engine.respond(plan, initialState("start"), [], "Book it", () => Effect.void))
      yield* TestClock.adjust("500 millis")
      const stopping = yield* Effect.fork(Fiber.interrupt(step))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(stopping)
      expect(finished).toEqual(["book"])
      expect(interrupted).toEqual(["look_up"])
    }).pipe(Effect.provide(layer))
  })
})
