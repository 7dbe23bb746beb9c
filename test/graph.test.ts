import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { buildStarterWorkflow } from "../src/graph/starterGraph.ts"
import { malformedReferences } from "../src/graph/templateVariables.ts"
import { toolNameFor } from "../src/graph/toolName.ts"
import { structureProblems, validateDefinition } from "../src/graph/validation.ts"
import { generatedAgentContent, runnableDefinition } from "./support/workflowGraphs.ts"

type Definition = ReturnType<typeof runnableDefinition>
const node = (definition: Definition, id: string) => definition.nodes.find((candidate) => candidate.id === id)! as any
const edge = (definition: Definition, id: string) => definition.edges.find((candidate) => candidate.id === id)! as any

const variant = (change: (definition: Definition) => void) => {
  const definition = runnableDefinition()
  change(definition)
  return definition
}

describe("tool names", () => {
  it.each([
    ["Interested", "interested"],
    ["Transfer to Billing!", "transfer_to_billing_"],
    ["  call--back  later ", "_call_back_later_"],
    ["Déjà vu", "d_j_vu"],
    ["ALREADY_snake_42", "already_snake_42"]
  ])("%j becomes %j", (label, expected) => {
    expect(toolNameFor(label)).toBe(expected)
  })
})

describe("template references", () => {
  it.each([
    ["Hi {{name}}", []],
    ["Hi {{ customer.first_name | friend }}", []],
    ["{{name|}} and {{a_b}}", []],
    ["Hi {{}}", ["{{}}"]],
    ["Hi {{1st}}", ["{{1st}}"]],
    ["Hi {{first name}}", ["{{first name}}"]],
    ["Hi {{name", ["{{name"]]
  ])("%j has malformed references %j", (text, expected) => {
    expect(malformedReferences(text)).toEqual(expected)
  })
})

describe("workflow definition validation", () => {
  it("accepts a runnable definition and returns its typed graph", () => {
    const result = validateDefinition(runnableDefinition())
    expect(result.problems).toEqual([])
    expect(result.graph?.nodes.map((n) => n.type)).toEqual(["startCall", "agentNode", "endCall", "globalNode"])
    expect(result.graph?.edges[0]?.data.label).toBe("Interested")
  })

  it("accepts cycles, several end nodes and unknown editor keys", () => {
    const definition = variant((d) => {
      d.nodes.push(
        { id: "end2", type: "endCall", position: { x: 200, y: 320 }, data: { name: "Hang up", prompt: "Bye." } } as any
      )
      d.edges.push({ id: "e3", source: "qualify", target: "start", data: { label: "Back", condition: "x" } } as any)
      d.edges.splice(2, 1)
      d.edges.push({ id: "e4", source: "qualify", target: "qualify", data: { label: "Repeat", condition: "Unclear" } })
      d.edges.push({ id: "e5", source: "qualify", target: "end2", data: { label: "Hang up", condition: "Rude" } })
      ;(d.nodes[0] as any).selected = true
      ;(d.nodes[0]!.data as any).ui_color = "red"
    })
    expect(validateDefinition(definition).problems).toEqual([])
  })

  const cases: Array<
    [
      string,
      (d: Definition) => void,
      Array<{ rule: string; kind: string; id: string | null; field: string | null; stage?: string }>
    ]
  > = [
    ["start node missing", (d) => d.nodes.splice(0, 1), [
      { rule: "edge_endpoint_missing", kind: "edge", id: "e1", field: "source", stage: "structure" },
      { rule: "start_missing", kind: "workflow", id: null, field: "nodes" }
    ]],
    ["two start nodes", (d) => d.nodes.push({ ...node(d, "start"), id: "start2" }), [
      { rule: "start_duplicate", kind: "node", id: "start2", field: null }
    ]],
    ["no end node", (d) => {
      d.nodes.splice(2, 1)
      d.edges.splice(1, 1)
    }, [
      { rule: "end_missing", kind: "workflow", id: null, field: "nodes" },
      { rule: "dead_end", kind: "node", id: "qualify", field: null }
    ]],
    ["two global nodes", (d) => d.nodes.push({ ...node(d, "global"), id: "global2" }), [
      { rule: "global_duplicate", kind: "node", id: "global2", field: null }
    ]],
    [
      "edge into the global node",
      (d) => d.edges.push({ id: "e9", source: "qualify", target: "global", data: { label: "G", condition: "c" } }),
      [
        { rule: "global_node_edge", kind: "edge", id: "e9", field: null }
      ]
    ],
    [
      "edge into the start node",
      (d) => d.edges.push({ id: "e9", source: "qualify", target: "start", data: { label: "Again", condition: "c" } }),
      [
        { rule: "start_incoming", kind: "edge", id: "e9", field: "target" }
      ]
    ],
    [
      "edge leaving an end node",
      (d) => d.edges.push({ id: "e9", source: "end", target: "qualify", data: { label: "More", condition: "c" } }),
      [
        { rule: "end_outgoing", kind: "edge", id: "e9", field: "source" }
      ]
    ],
    [
      "unreachable agent node",
      (d) =>
        d.nodes.push(
          { id: "lost", type: "agentNode", position: { x: 0, y: 0 }, data: { name: "Lost", prompt: "p" } } as any
        ),
      [
        { rule: "node_unreachable", kind: "node", id: "lost", field: null },
        { rule: "dead_end", kind: "node", id: "lost", field: null }
      ]
    ],
    ["start without an exit", (d) => {
      edge(d, "e1").source = "qualify"
    }, [
      { rule: "start_no_exit", kind: "node", id: "start", field: null },
      { rule: "node_unreachable", kind: "node", id: "qualify", field: null },
      { rule: "node_unreachable", kind: "node", id: "end", field: null }
    ]],
    ["empty prompt and missing name", (d) => {
      node(d, "qualify").data.prompt = "  "
      delete node(d, "end").data.name
    }, [
      { rule: "node_data", kind: "node", id: "qualify", field: "data.prompt" },
      { rule: "node_data", kind: "node", id: "end", field: "data.name" }
    ]],
    ["global node without prompt", (d) => {
      delete node(d, "global").data.prompt
    }, [
      { rule: "node_data", kind: "node", id: "global", field: "data.prompt" }
    ]],
    ["wrong field types", (d) => {
      node(d, "start").data.allow_interrupt = "yes"
      node(d, "start").data.greeting_type = "video"
    }, [
      { rule: "node_data", kind: "node", id: "start", field: "data.allow_interrupt" },
      { rule: "node_data", kind: "node", id: "start", field: "data.greeting_type" }
    ]],
    ["audio greeting without recording", (d) => {
      node(d, "start").data.greeting_type = "audio"
    }, [
      { rule: "greeting_recording_missing", kind: "node", id: "start", field: "data.greeting_recording_id" }
    ]],
    ["unknown node type", (d) => {
      node(d, "global").type = "http_request"
    }, [
      { rule: "node_type_unknown", kind: "node", id: "global", field: "type", stage: "structure" }
    ]],
    ["node without id", (d) => {
      delete node(d, "global").id
    }, [
      { rule: "node_shape", kind: "node", id: null, field: "id", stage: "structure" }
    ]],
    ["duplicate node id", (d) => {
      node(d, "global").id = "qualify"
    }, [
      { rule: "node_id_duplicate", kind: "node", id: "qualify", field: "id", stage: "structure" }
    ]],
    ["node data not an object", (d) => {
      node(d, "global").data = "x"
    }, [
      { rule: "node_shape", kind: "node", id: "global", field: "data", stage: "structure" }
    ]],
    ["bad position", (d) => {
      node(d, "global").position = { x: "1" }
    }, [
      { rule: "node_shape", kind: "node", id: "global", field: "position.x", stage: "structure" },
      { rule: "node_shape", kind: "node", id: "global", field: "position.y", stage: "structure" }
    ]],
    ["duplicate edge id", (d) => {
      edge(d, "e2").id = "e1"
    }, [
      { rule: "edge_id_duplicate", kind: "edge", id: "e1", field: "id", stage: "structure" }
    ]],
    ["edge to a missing node", (d) => {
      edge(d, "e2").target = "nowhere"
    }, [
      { rule: "edge_endpoint_missing", kind: "edge", id: "e2", field: "target", stage: "structure" },
      { rule: "dead_end", kind: "node", id: "qualify", field: null },
      { rule: "node_unreachable", kind: "node", id: "end", field: null }
    ]],
    ["edge without label and condition", (d) => {
      edge(d, "e2").data = { label: "", condition: "" }
    }, [
      { rule: "edge_data", kind: "edge", id: "e2", field: "data.label" },
      { rule: "edge_data", kind: "edge", id: "e2", field: "data.condition" }
    ]],
    ["edge without source", (d) => {
      delete edge(d, "e2").source
    }, [
      { rule: "edge_shape", kind: "edge", id: "e2", field: "source", stage: "structure" },
      { rule: "dead_end", kind: "node", id: "qualify", field: null },
      { rule: "node_unreachable", kind: "node", id: "end", field: null }
    ]],
    ["label without letters or digits", (d) => {
      edge(d, "e2").data.label = "?!"
    }, [
      { rule: "label_unusable", kind: "edge", id: "e2", field: "data.label" }
    ]],
    ["label naming the built-in end_call tool", (d) => {
      edge(d, "e2").data.label = "End call"
    }, [
      { rule: "label_reserved", kind: "edge", id: "e2", field: "data.label" }
    ]],
    ["label too long for a tool name", (d) => {
      edge(d, "e2").data.label = "a".repeat(65)
    }, [
      { rule: "label_too_long", kind: "edge", id: "e2", field: "data.label" }
    ]],
    [
      "two transitions with the same tool name",
      (d) => d.edges.push({ id: "e3", source: "qualify", target: "end", data: { label: "DONE", condition: "c" } }),
      [
        { rule: "transition_name_duplicate", kind: "edge", id: "e3", field: "data.label" }
      ]
    ],
    ["extraction enabled without variables", (d) => {
      node(d, "qualify").data.extraction_variables = []
    }, [
      { rule: "extraction_variables_missing", kind: "node", id: "qualify", field: "data.extraction_variables" }
    ]],
    ["duplicate and badly named extraction variables", (d) => {
      node(d, "qualify").data.extraction_variables = [
        { name: "budget", type: "number" },
        { name: "budget", type: "string" },
        { name: "2x", type: "date" }
      ]
    }, [
      { rule: "node_data", kind: "node", id: "qualify", field: "data.extraction_variables[2].name" },
      { rule: "node_data", kind: "node", id: "qualify", field: "data.extraction_variables[2].type" },
      { rule: "extraction_variable_duplicate", kind: "node", id: "qualify", field: "data.extraction_variables[1].name" }
    ]],
    ["malformed template reference in a prompt and an edge", (d) => {
      node(d, "qualify").data.prompt = "Ask {{first name}} about it"
      edge(d, "e1").data.transition_speech = "One moment {{"
    }, [
      { rule: "template_reference_malformed", kind: "edge", id: "e1", field: "data.transition_speech" },
      { rule: "template_reference_malformed", kind: "node", id: "qualify", field: "data.prompt" }
    ]]
  ]

  it.each(cases)("%s", (_name, change, expected) => {
    const { problems, graph } = validateDefinition(variant(change))
    expect(graph).toBeNull()
    expect(problems.map(({ rule, kind, id, field }) => ({ rule, kind, id, field }))).toEqual(
      expected.map(({ rule, kind, id, field }) => ({ rule, kind, id, field }))
    )
    for (const want of expected.filter((problem) => problem.stage)) {
      expect(problems.find((problem) => problem.rule === want.rule)?.stage).toBe(want.stage)
    }
  })

  it("reports every problem at once, with ids in the message and paths from the definition root", () => {
    const { problems } = validateDefinition(variant((d) => {
      node(d, "qualify").data.prompt = ""
      edge(d, "e2").data.condition = ""
      d.nodes.push({ ...node(d, "start"), id: "start2" })
    }))
    expect(problems).toHaveLength(3)
    const prompt = problems.find((problem) => problem.id === "qualify")!
    expect(prompt.path).toEqual(["nodes", 1, "data", "prompt"])
    expect(prompt.message).toBe("Node \"qualify\" (agentNode): data.prompt must not be empty")
    expect(problems.find((problem) => problem.id === "e2")!.path).toEqual(["edges", 1, "data", "condition"])
  })

  it.each([
    ["null", null],
    ["a string", "graph"],
    ["an array", []]
  ])("refuses %s as a definition", (_name, value) => {
    const { problems } = validateDefinition(value)
    expect(problems).toMatchObject([{ rule: "definition_shape", kind: "workflow", stage: "structure" }])
  })

  it("accepts a node's collect_digits step and refuses one that could not work, naming each field", () => {
    const accepted = validateDefinition(variant((d) => {
      node(d, "qualify").data.collect_digits = { max_digits: 4, terminator: null, timeout_ms: 4000, variable: "pin" }
    }))
    expect(accepted.problems).toEqual([])
    const { problems } = validateDefinition(variant((d) => {
      node(d, "qualify").data.collect_digits = { max_digits: 0, terminator: "5", timeout_ms: 100, variable: "2pin" }
    }))
    expect(problems.map((problem) => problem.path.slice(-1)[0]).sort()).toEqual([
      "max_digits",
      "terminator",
      "timeout_ms",
      "variable"
    ])
  })

  it("refuses a definition with more nodes than the bound", () => {
    const { problems } = validateDefinition({ nodes: Array.from({ length: 501 }, () => ({})), edges: [] })
    expect(problems).toMatchObject([{ rule: "definition_shape", field: "nodes", stage: "structure" }])
  })

  it("refuses a definition without nodes or edges arrays, naming both", () => {
    const { problems } = validateDefinition({ nodes: {} })
    expect(problems.map((problem) => problem.field)).toEqual(["nodes", "edges"])
  })

  it("separates problems that block saving a draft from those that block publishing", () => {
    const { problems } = validateDefinition(variant((d) => {
      node(d, "qualify").data.prompt = ""
      edge(d, "e2").id = "e1"
    }))
    expect(structureProblems(problems).map((problem) => problem.rule)).toEqual(["edge_id_duplicate"])
  })
})

/** The shared generated content, with a repeated disposition code the starter graph must fold. */
const content = () => ({ ...generatedAgentContent(), disposition_codes: ["QUALIFIED", "NOT_INTERESTED", "QUALIFIED"] })

describe("starter graph from generated content", () => {
  it("wraps content in a valid start → steps → end graph with a global node", () => {
    const built = buildStarterWorkflow(content())
    expect(Either.isRight(built)).toBe(true)
    const workflow = Either.getOrThrow(built)
    expect(workflow.name).toBe("Lead qualifier")
    expect(workflow.dispositionCodes).toEqual(["QUALIFIED", "NOT_INTERESTED"])
    expect(validateDefinition(workflow.definition).problems).toEqual([])
    const types = (workflow.definition.nodes as Array<any>).map((n) => `${n.type}:${n.id}`)
    expect(types).toEqual([
      "startCall:start",
      "agentNode:step_qualify",
      "agentNode:step_book",
      "endCall:end",
      "globalNode:global"
    ])
    const end = (workflow.definition.nodes as Array<any>).find((n) => n.id === "end")
    expect(end.data.extraction_variables).toEqual([{ name: "budget", type: "number", prompt: "Their budget in USD" }])
  })

  it.each([
    ["missing fields", (c: any) => {
      delete c.greeting
      delete c.steps
    }, ["greeting: is required", "steps: is required"]],
    ["unknown transition target", (c: any) => {
      c.transitions[2].to = "pricing"
    }, ["transitions.2.to: \"pricing\" is not \"start\", \"end\" or a step key"]],
    ["a step that cannot be left", (c: any) => {
      c.transitions.splice(4, 1)
    }, [
      "Node \"book\" (agentNode): an agentNode needs at least one outgoing edge, or the conversation can never leave it"
    ]],
    ["a reserved step key", (c: any) => {
      c.steps.push({ key: "end", name: "E", prompt: "p" })
    }, ["steps.2.key: \"end\" is used twice or is reserved (start, end)"]]
  ])("explains %s in words the model can act on", (_name, change, expected) => {
    const broken = content()
    change(broken)
    const built = buildStarterWorkflow(broken)
    expect(Either.isLeft(built)).toBe(true)
    expect(Either.isLeft(built) && built.left).toEqual(expected)
  })
})
