import OpenAI from "openai"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"

/** The loopback LLM stand-in speaks what the real `openai` client expects, streaming or not. */
let llm: ScriptedLlm
let openai: OpenAI

beforeAll(async () => {
  llm = await startScriptedLlm()
  openai = new OpenAI({ apiKey: "sk-test", baseURL: llm.baseUrl, maxRetries: 0, timeout: 2000 })
})
afterEach(() => llm.reset())
afterAll(() => llm?.close())

const tools = [
  {
    type: "function" as const,
    function: { name: "transfer_to_billing", parameters: { type: "object", properties: {} } }
  },
  { type: "function" as const, function: { name: "end_call", parameters: { type: "object", properties: {} } } }
]

describe("scripted OpenAI-compatible server", () => {
  it("answers queued content with usage and records the request", async () => {
    llm.enqueue(reply.content("Hello there!", { usage: { prompt_tokens: 11 } }))
    const completion = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      tools
    })
    expect(completion.choices[0]!.message.content).toBe("Hello there!")
    expect(completion.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 })
    expect(llm.requests[0]!.toolNames).toEqual(["transfer_to_billing", "end_call"])
    expect(llm.requests[0]!.headers.authorization).toBe("Bearer sk-test")
    expect(llm.pending()).toBe(0)
  })

  it("answers tool calls without streaming", async () => {
    llm.enqueue(reply.toolCalls([{ name: "end_call", arguments: { reason: "done" } }]))
    const completion = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "bye" }],
      tools
    })
    expect(completion.choices[0]!.finish_reason).toBe("tool_calls")
    expect(completion.choices[0]!.message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "end_call", arguments: "{\"reason\":\"done\"}" } }
    ])
  })

  it("streams content tokens and a final usage chunk", async () => {
    llm.enqueue(reply.content("Hello there, friend.", { usage: { prompt_tokens: 5, completion_tokens: 4 } }))
    const stream = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    const tokens: Array<string> = []
    let usage: unknown
    let finish: string | null = null
    for await (const chunk of stream) {
      const choice = chunk.choices[0]
      if (choice?.delta.content) tokens.push(choice.delta.content)
      if (choice?.finish_reason) finish = choice.finish_reason
      if (chunk.usage) usage = chunk.usage
    }
    expect(tokens).toEqual(["Hello", " there,", " friend."])
    expect(finish).toBe("stop")
    expect(usage).toEqual({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 })
    expect(llm.requests[0]!.stream).toBe(true)
  })

  it("streams tool calls as fragments the client can reassemble", async () => {
    llm.enqueue(
      reply.toolCalls([{ name: "transfer_to_billing", arguments: { note: "wants a refund for order 1234" } }], {
        content: "One moment."
      })
    )
    const stream = openai.chat.completions.stream({
      model: "m",
      messages: [{ role: "user", content: "refund" }],
      tools
    })
    const final = await stream.finalChatCompletion()
    expect(final.choices[0]!.message.content).toBe("One moment.")
    expect(final.choices[0]!.message.tool_calls?.[0]).toMatchObject({
      function: { name: "transfer_to_billing", arguments: "{\"note\":\"wants a refund for order 1234\"}" }
    })
  })

  it("answers a scripted HTTP error with an OpenAI-style body", async () => {
    llm.enqueue(reply.error(429, "slow down"))
    await expect(openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] })).rejects
      .toMatchObject({ status: 429 })
  })

  it("delays a reply, or hangs until the client gives up", async () => {
    llm.enqueue(reply.delay(300, reply.content("late")))
    const started = Date.now()
    const late = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] })
    expect(late.choices[0]!.message.content).toBe("late")
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)

    llm.enqueue(reply.hang())
    await expect(
      openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }, { timeout: 300 })
    ).rejects.toThrow(/timed out/i)
  })

  it("fails loudly when no reply is queued", async () => {
    await expect(openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] })).rejects
      .toMatchObject({ status: 500 })
  })
})
