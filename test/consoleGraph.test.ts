import { describe, expect, it } from "vitest"
import { validateDefinition } from "../src/graph/validation.ts"
import { newNodeFields, toDefinition, toEditorGraph, withProblems } from "../web/src/editor/graphConversion.ts"

/** A definition using every field the definition schema knows, and keys it does not. */
const everyField = {
  viewport: { x: 10, y: -20, zoom: 0.8 },
  nodes: [
    {
      id: "start",
      type: "startCall",
      position: { x: 0, y: 0 },
      width: 200,
      data: {
        name: "Greeting",
        prompt: "Greet the caller and ask how you can help.",
        allow_interrupt: false,
        add_global_prompt: true,
        greeting_type: "audio",
        greeting: "Hello {{first_name | there}}!",
        greeting_recording_id: "rec-123",
        extraction_enabled: true,
        extraction_prompt: "Note what they ask for.",
        extraction_variables: [
          { name: "topic", type: "string", prompt: "What they called about" },
          { name: "budget", type: "number" },
          { name: "urgent", type: "boolean", prompt: "Whether it is urgent" }
        ],
        custom_editor_flag: { collapsed: true }
      }
    },
    {
      id: "ask",
      type: "agentNode",
      position: { x: 250.5, y: 180 },
      data: { name: "Ask", prompt: "Ask about the budget.", allow_interrupt: true, extraction_enabled: false }
    },
    {
      id: "end",
      type: "endCall",
      position: { x: 0, y: 400 },
      data: { name: "Goodbye", prompt: "Thank them and say goodbye.", add_global_prompt: false }
    },
    { id: "global", type: "globalNode", position: { x: 600, y: 0 }, data: { name: "Persona", prompt: "You are Sam." } }
  ],
  edges: [
    {
      id: "start-ask",
      source: "start",
      target: "ask",
      animated: true,
      data: {
        label: "Interested",
        condition: "They want to hear more",
        transition_speech: "Great, let me ask a few questions.",
        transition_speech_type: "text"
      }
    },
    {
      id: "ask-end",
      source: "ask",
      target: "end",
      data: {
        label: "Done",
        condition: "The budget is known",
        transition_speech_type: "audio",
        transition_speech_recording_id: "rec-456"
      }
    }
  ]
}

describe("the editor's graph ↔ definition conversion", () => {
  it("round-trips every node and edge field, and keys it does not know, unchanged", () => {
    expect(validateDefinition(everyField).problems).toEqual([])
    expect(toDefinition(toEditorGraph(everyField))).toEqual(everyField)
  })

  it("gives React Flow what it draws: types, positions, edge labels", () => {
    const graph = toEditorGraph(everyField)
    expect(graph.nodes.map((node) => [node.id, node.type, node.position])).toEqual([
      ["start", "startCall", { x: 0, y: 0 }],
      ["ask", "agentNode", { x: 250.5, y: 180 }],
      ["end", "endCall", { x: 0, y: 400 }],
      ["global", "globalNode", { x: 600, y: 0 }]
    ])
    expect(graph.edges.map((edge) => [edge.source, edge.target, edge.label])).toEqual([
      ["start", "ask", "Interested"],
      ["ask", "end", "Done"]
    ])
  })

  it("keeps edits, moves and display state apart: only the definition's fields are written", () => {
    const graph = toEditorGraph(everyField)
    const moved = {
      ...graph,
      nodes: graph.nodes.map((node) =>
        node.id === "ask"
          ? {
            ...node,
            position: { x: 1, y: 2 },
            selected: true,
            data: { ...node.data, fields: { ...node.data.fields, prompt: "New prompt" }, active: true }
          }
          : node
      )
    }
    const written = toDefinition(
      withProblems(moved, [{ kind: "node", id: "ask", field: "prompt", message: "bad" }]) as never
    )
    const ask = (written.nodes as Array<any>).find((node) => node.id === "ask")
    expect(ask).toEqual({
      id: "ask",
      type: "agentNode",
      position: { x: 1, y: 2 },
      data: { ...everyField.nodes[1]!.data, prompt: "New prompt" }
    })
  })

  it("lays out nodes stored without a position on a grid, and tolerates an empty draft", () => {
    const graph = toEditorGraph({
      nodes: [
        { id: "a", type: "startCall", data: {} },
        { id: "b", type: "endCall", data: {} }
      ],
      edges: []
    })
    expect(graph.nodes.map((node) => node.position)).toEqual([{ x: 0, y: 0 }, { x: 280, y: 0 }])
    expect(toDefinition(toEditorGraph({}))).toEqual({ nodes: [], edges: [] })
  })

  it("places the server's problems on the node or edge they name", () => {
    const graph = toEditorGraph(everyField)
    const placed = withProblems(graph, [
      { kind: "node", id: "ask", field: "prompt", message: "must not be empty" },
      { kind: "edge", id: "ask-end", field: null, message: "leads nowhere" },
      { kind: "workflow", id: null, field: null, message: "needs a start" }
    ])
    expect(placed.nodes.find((node) => node.id === "ask")?.data.problems).toEqual(["prompt: must not be empty"])
    expect(placed.nodes.find((node) => node.id === "start")).toBe(graph.nodes[0])
    expect(placed.edges.find((edge) => edge.id === "ask-end")?.data?.problems).toEqual(["leads nowhere"])
  })

  it("starts each added node type with the fields to fill in", () => {
    for (const type of ["startCall", "agentNode", "endCall", "globalNode"] as const) {
      expect(newNodeFields(type)).toMatchObject({ name: expect.any(String), prompt: "" })
    }
  })
})
