/**
 * A small runnable workflow definition (start → qualify → end, plus a global node), for tests to
 * use as is or to break one rule at a time.
 */
export const runnableDefinition = () => ({
  nodes: [
    {
      id: "start",
      type: "startCall",
      position: { x: 0, y: 0 },
      data: {
        name: "Start",
        greeting: "Hi {{first_name | there}}!",
        prompt: "Introduce yourself and ask how you can help.",
        allow_interrupt: true
      }
    },
    {
      id: "qualify",
      type: "agentNode",
      position: { x: 0, y: 160 },
      data: {
        name: "Qualify",
        prompt: "Ask about their budget.",
        extraction_enabled: true,
        extraction_variables: [{ name: "budget", type: "number", prompt: "Budget in USD" }]
      }
    },
    {
      id: "end",
      type: "endCall",
      position: { x: 0, y: 320 },
      data: { name: "End", prompt: "Thank them and say goodbye." }
    },
    {
      id: "global",
      type: "globalNode",
      position: { x: 400, y: 0 },
      data: { name: "Global", prompt: "Be brief and friendly." }
    }
  ],
  edges: [
    {
      id: "e1",
      source: "start",
      target: "qualify",
      data: { label: "Interested", condition: "The caller wants to hear more" }
    },
    { id: "e2", source: "qualify", target: "end", data: { label: "Done", condition: "The budget is known" } }
  ]
})

/** Agent content as an LLM would write it for a template request (see src/graph/templateContent.ts). */
export const generatedAgentContent = () => ({
  name: "Lead qualifier",
  greeting: "Hi {{first_name | there}}, this is Sam from Acme.",
  global_prompt: "You are Sam, a friendly sales assistant. Keep answers short.",
  opening_prompt: "Ask whether they have a minute to talk.",
  steps: [
    { key: "qualify", name: "Qualify", prompt: "Ask about budget and timeline." },
    { key: "book", name: "Book demo", prompt: "Offer a demo slot this week." }
  ],
  transitions: [
    { from: "start", to: "qualify", label: "Has time", condition: "They agree to talk" },
    { from: "start", to: "end", label: "Busy", condition: "They have no time" },
    { from: "qualify", to: "book", label: "Qualified", condition: "Budget and timeline fit" },
    { from: "qualify", to: "end", label: "Not a fit", condition: "No budget" },
    { from: "book", to: "end", label: "Booked", condition: "A slot is agreed" }
  ],
  closing_prompt: "Thank them and say goodbye.",
  extraction_variables: [{ name: "budget", type: "number", prompt: "Their budget in USD" }],
  disposition_codes: ["QUALIFIED", "NOT_INTERESTED", "CALLBACK"]
})
