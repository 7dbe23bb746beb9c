import { describe, expect, it } from "vitest"
import { acceptDisposition } from "../src/conversation/disposition.ts"
import { acceptExtracted, extractionAt, extractionSchema } from "../src/conversation/extraction.ts"
import { durationExceeded, limitsFrom } from "../src/conversation/limits.ts"
import { messagesFor, systemPromptFor } from "../src/conversation/prompt.ts"
import { greetingFor, runContext } from "../src/conversation/runContext.ts"
import { toolsAt } from "../src/conversation/tools.ts"
import { renderTemplate } from "../src/graph/templateVariables.ts"
import { validateDefinition } from "../src/graph/validation.ts"
import { salesDefinition } from "./support/chatFixtures.ts"

const graph = validateDefinition(salesDefinition()).graph!
const nodeOf = (id: string) => graph.nodes.find((node) => node.id === id)!

describe("conversation rules", () => {
  it("puts the run's context over the template defaults", () => {
    expect(runContext({ company: "Acme", first_name: "Default" }, { first_name: "Ada" })).toEqual({
      company: "Acme",
      first_name: "Ada"
    })
    expect(runContext(null, {})).toEqual({})
  })

  it("picks the greeting: text override, then the start greeting; audio and blanks fall back", () => {
    const start = nodeOf("start")
    if (start.type !== "startCall") throw new Error("start node expected")
    expect(greetingFor(start.data, { company: "Acme" })).toBe("Hi there, this is Acme!")
    expect(greetingFor(start.data, { greeting_override: "Yo {{company}}", company: "Acme" })).toBe("Yo Acme")
    expect(greetingFor(start.data, { greeting_override: { type: "text", text: "Typed" } })).toBe("Typed")
    expect(greetingFor(start.data, { greeting_override_type: "text", greeting_override_text: "From CSV" })).toBe(
      "From CSV"
    )
    expect(greetingFor(start.data, { greeting_override: { type: "audio", recording_id: "r1" }, company: "A" })).toBe(
      "Hi there, this is A!"
    )
    expect(greetingFor({ ...start.data, greeting: "  " }, {})).toBeNull()
    expect(greetingFor({ ...start.data, greeting_type: "audio" }, {})).toBeNull()
  })

  it("renders variables named like Object's properties from the run's own context only", () => {
    const csvContext = JSON.parse(
      "{\"__proto__\":\"Ada\",\"constructor\":\"Bo\",\"toString\":\"Cy\",\"customer\":{\"plan\":\"gold\"}}"
    )
    const context = runContext({ company: "Acme" }, csvContext)
    expect(renderTemplate("{{__proto__}} {{constructor}} {{toString}} {{customer.plan}}", context)).toBe(
      "Ada Bo Cy gold"
    )
    expect(
      renderTemplate("[{{constructor}}][{{valueOf | none}}][{{customer.constructor}}][{{company.length}}]", {
        company: "Acme"
      })
    )
      .toBe("[][none][][]")
  })

  it("prepends the global prompt unless the node opts out", () => {
    expect(systemPromptFor(graph, nodeOf("qualify"), { company: "Acme" })).toBe(
      "Be brief. Company: Acme.\n\nAsk about their budget."
    )
    const qualify = nodeOf("qualify")
    const optedOut = { ...qualify, data: { ...qualify.data, add_global_prompt: false } } as typeof qualify
    expect(systemPromptFor(graph, optedOut, {})).toBe("Ask about their budget.")
    expect(messagesFor("sys", [{ role: "user", text: "hi", node_id: "start", at: "" }])).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "hi" }
    ])
  })

  it("offers outgoing edges as tools named by the shared rule, then end_call", () => {
    const tools = toolsAt(graph, "qualify")
    expect(tools.definitions).toEqual([
      { name: "budget_known_done", description: "The budget is known" },
      { name: "end_call", description: expect.any(String) }
    ])
    expect(tools.transitions.get("budget_known_done")!.target).toBe("end")
    expect(toolsAt(graph, "end").definitions.map((tool) => tool.name)).toEqual(["end_call"])
  })

  it("reads limits from workflow configurations, clamped, with defaults", () => {
    const defaults = { llmTimeoutSeconds: 60, idleTimeoutSeconds: 1800 }
    expect(limitsFrom(null, defaults)).toEqual({
      maxTurns: 100,
      maxDurationSeconds: 3600,
      llmTimeoutSeconds: 60,
      idleTimeoutSeconds: 1800
    })
    expect(
      limitsFrom({
        max_turns: 0,
        max_call_duration: 300,
        llm_timeout_seconds: 999,
        text_chat_inactivity_timeout_seconds: 90
      }, defaults)
    )
      .toEqual({ maxTurns: 1, maxDurationSeconds: 300, llmTimeoutSeconds: 60, idleTimeoutSeconds: 90 })
    expect(limitsFrom({ max_turns: "ten" }, defaults).maxTurns).toBe(100)
    const limits = limitsFrom({ max_duration_seconds: 10 }, defaults)
    expect(durationExceeded(limits, 0, 9_999)).toBe(false)
    expect(durationExceeded(limits, 0, 10_000)).toBe(true)
  })

  it("extracts only declared variables, with their declared types", () => {
    const extraction = extractionAt(nodeOf("qualify"))!
    expect(extraction.variables.map((variable) => variable.name)).toEqual(["budget", "decision_maker"])
    expect(extractionAt(nodeOf("start"))).toBeNull()
    expect(extractionSchema(extraction.variables)).toMatchObject({
      required: ["budget", "decision_maker"],
      additionalProperties: false,
      properties: { budget: { type: ["number", "null"] } }
    })
    expect(acceptExtracted(extraction.variables, { budget: " 42 ", decision_maker: "true", other: 1 })).toEqual({
      budget: 42,
      decision_maker: true
    })
    expect(acceptExtracted(extraction.variables, { budget: "lots", decision_maker: null })).toEqual({})
    expect(acceptExtracted(extraction.variables, "not json")).toEqual({})
  })

  it("maps the disposition onto the workflow's codes, else the end reason", () => {
    expect(acceptDisposition(["A", "B"], "end_call_tool", { call_disposition: "Sold", mapped_call_disposition: "B" }))
      .toEqual({ call_disposition: "Sold", mapped_call_disposition: "B" })
    expect(acceptDisposition(["A"], "idle_timeout", { call_disposition: "", mapped_call_disposition: "Z" }))
      .toEqual({ call_disposition: "idle_timeout", mapped_call_disposition: "idle_timeout" })
    expect(acceptDisposition([], "max_turns_reached", undefined).mapped_call_disposition).toBe("max_turns_reached")
  })
})
