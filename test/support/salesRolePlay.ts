/**
 * A stateless scripted model for agent tests over `salesDefinition`: it answers each request from
 * what the request asks, so any number of concurrent test conversations can share one scripted
 * LLM. The requests are told apart as the product sends them:
 *
 * - the simulated caller: structured `simulated_caller_turn`, the persona in the system message;
 * - the judge: structured `agent_test_judgement`;
 * - extraction and disposition: structured `extracted_variables` / `call_disposition`;
 * - the agent: a streamed chat request with the node's tools.
 *
 * Personas: one containing EAGER says yes, then gives a budget of 5000; REFUSER says no thanks.
 * An agent whose system prompt contains NEVER_QUALIFY (a draft under test) ends every call at the start.
 */
import { reply } from "./scriptedLlm.ts"

const contentOf = (message: any) => (typeof message?.content === "string" ? message.content : "")

const lastOf = (messages: Array<any>, role: string) => [...messages].reverse().find((message) => message.role === role)

const callerTurn = (body: any) => {
  const messages: Array<any> = body.messages ?? []
  const persona = contentOf(messages[0])
  const said = messages.filter((message) => message.role === "assistant").length
  if (persona.includes("REFUSER")) {
    return reply.json({ message: "No thanks, not interested.", hang_up: said >= 1 })
  }
  const lines = ["Yes, tell me more", "About 5000 dollars, and I decide"]
  return reply.json({ message: lines[said] ?? "Bye", hang_up: said >= lines.length })
}

const judgement = (body: any) => {
  const text = contentOf(body.messages?.[1])
  const asked = /budget/i.test(text.split("# Criteria")[0] ?? "")
  return reply.json({
    results: [{
      criterion: 1,
      passed: asked,
      reason: asked ? "The agent asked about the budget." : "The agent never asked about the budget."
    }]
  })
}

const agentTurn = (body: any) => {
  const messages: Array<any> = body.messages ?? []
  const system = contentOf(messages[0])
  const heard = contentOf(lastOf(messages, "user"))
  const tools: Array<string> = (body.tools ?? []).map((tool: any) => tool.function.name)
  if (tools.includes("interested")) {
    if (system.includes("NEVER_QUALIFY") || /no thanks/i.test(heard)) {
      return reply.toolCalls([{ name: "end_call", arguments: {} }], { content: "Goodbye then." })
    }
    return /yes/i.test(heard) ? reply.toolCalls([{ name: "interested", arguments: {} }]) : reply.content("Interested?")
  }
  if (tools.includes("budget_known_done")) {
    if (/\d/.test(heard)) return reply.toolCalls([{ name: "budget_known_done", arguments: {} }])
    return reply.content("What budget do you have in mind?")
  }
  return reply.content("Thanks, goodbye!")
}

/** The scripted LLM's `answer` for agent-test conversations with the sales agent. */
export const salesRolePlay = (body: any) => {
  const schema = body.response_format?.json_schema?.name
  if (schema === "simulated_caller_turn") return callerTurn(body)
  if (schema === "agent_test_judgement") return judgement(body)
  if (schema === "call_disposition") {
    const transcript = JSON.stringify(body.messages)
    return reply.json(
      /5000/.test(transcript)
        ? { call_disposition: "Qualified lead", mapped_call_disposition: "QUALIFIED" }
        : { call_disposition: "Not interested", mapped_call_disposition: "NOT_INTERESTED" }
    )
  }
  if (schema !== undefined) {
    const budget = /5000/.test(JSON.stringify(body.messages))
    return reply.json(budget ? { budget: "5000", decision_maker: true } : {})
  }
  return agentTurn(body)
}
