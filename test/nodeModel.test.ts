import { describe, expect, it } from "vitest"
import { connectionAt } from "../src/conversation/nodeModel.ts"
import type { WorkflowNode } from "../src/graph/definition.ts"

const connection = { model: "agent-model", temperature: 0.3 }
const node = (data: Record<string, unknown>) =>
  ({ id: "n", type: "agentNode", data: { name: "N", prompt: "p", ...data } }) as unknown as WorkflowNode

describe("the model at a node", () => {
  it("is the node's own model and temperature when it names them", () => {
    expect(connectionAt(connection, node({ llm_model: "node-model", llm_temperature: 1.1 }))).toEqual({
      model: "node-model",
      temperature: 1.1
    })
  })

  it("is the agent's where the node names none", () => {
    expect(connectionAt(connection, node({}))).toEqual(connection)
  })

  it("stays the fallback model after a failure, even at a node naming its own (that model may be the one down)", () => {
    const fallback = { model: "fallback-model", temperature: 0.3 }
    expect(connectionAt(fallback, node({ llm_model: "node-model", llm_temperature: 0.9 }), true)).toEqual({
      model: "fallback-model",
      temperature: 0.9
    })
  })
})
