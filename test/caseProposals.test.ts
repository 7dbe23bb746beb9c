import { describe, expect, it } from "vitest"
import { proposeCases } from "../src/agentTests/caseProposals.ts"
import type { WorkflowGraph } from "../src/graph/definition.ts"

const agentNode = (id: string, name: string) => ({ id, type: "agentNode" as const, data: { name, prompt: "…" } })
const edge = (id: string, source: string, target: string, condition: string) => ({
  id,
  source,
  target,
  data: { label: id, condition }
})

const graph = {
  nodes: [
    { id: "start", type: "startCall", data: { name: "Start", prompt: "Greet." } },
    agentNode("sales", "Sales"),
    agentNode("support", "Support"),
    { id: "end", type: "endCall", data: { name: "End", prompt: "Bye." } },
    agentNode("orphan", "Orphan")
  ],
  edges: [
    edge("to-sales", "start", "sales", "The caller wants to buy"),
    edge("to-support", "start", "support", "The caller has a problem"),
    edge("sales-end", "sales", "end", "The order is placed"),
    edge("support-end", "support", "end", "The problem is solved"),
    edge("support-sales", "support", "sales", "The caller wants an upgrade"),
    edge("orphan-end", "orphan", "end", "Never reached")
  ]
} as unknown as WorkflowGraph

describe("test cases proposed from an agent's graph", () => {
  it("covers every transition reachable from the start by its shortest path, in order", () => {
    const cases = proposeCases("Shop", graph, ["first_name"])
    expect(cases.map((proposal) => proposal.expectations.nodes_visited)).toEqual([
      ["start", "sales"],
      ["start", "support"],
      ["start", "sales", "end"],
      ["start", "support", "end"],
      ["start", "support", "sales"]
    ])
    const upgrade = cases[4]!
    expect(upgrade.persona).toContain("talking to \"Shop\"")
    expect(upgrade.persona.indexOf("The caller has a problem")).toBeLessThan(
      upgrade.persona.indexOf("The caller wants an upgrade")
    )
    expect(upgrade.max_turns).toBe(6)
    expect(upgrade.variables).toEqual({ first_name: "Sample first name" })
    expect(cases.every((proposal) => proposal.expectations.no_loop === true)).toBe(true)
  })

  it("proposes one plain caller for an agent without transitions, and none without a start", () => {
    const single = { nodes: [graph.nodes[0]!], edges: [], sideNodes: [] } as WorkflowGraph
    expect(proposeCases("Shop", single, [])).toMatchObject([{ expectations: { nodes_visited: ["start"] } }])
    expect(proposeCases("Shop", { nodes: [graph.nodes[1]!], edges: [], sideNodes: [] }, [])).toEqual([])
  })
})
