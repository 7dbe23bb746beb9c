export interface TemplateRequest {
  readonly call_type: "inbound" | "outbound"
  readonly use_case: string
  readonly activity_description: string
}

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

const SYSTEM =
  `You design voice AI agents for phone calls. Write the content of one agent as JSON matching the given schema.
- greeting: the first sentence the agent speaks.
- global_prompt: persona, tone and rules that apply in every step (short spoken sentences, one question at a time).
- opening_prompt: what the agent does right after the greeting.
- steps: 1 to 8 conversation steps in order; key is lower_snake_case and unique.
- transitions: how the conversation moves. "from" and "to" are "start", "end" or a step key. Every step must be reachable from "start", every step needs a way out, and at least one transition must lead to "end". label is a short action name (e.g. "Qualified lead"; never "End call", which is reserved), condition says when to take it.
- closing_prompt: how the agent wraps up before hanging up.
- extraction_variables: facts to capture from the call (name in lower_snake_case, type string, number or boolean, prompt says what to capture).
- disposition_codes: 1 to 20 UPPER_SNAKE_CASE outcomes of a call (e.g. QUALIFIED, NOT_INTERESTED).
- To use a detail of the contact, write {{variable | fallback}} with a fallback, e.g. {{first_name | there}}.`

/** The conversation that asks the organization's LLM for an agent's content. */
export const templateMessages = (request: TemplateRequest): Array<ChatMessage> => [
  { role: "system", content: SYSTEM },
  {
    role: "user",
    content: [
      `Call type: ${
        request.call_type === "inbound" ? "inbound (people call the agent)" : "outbound (the agent calls people)"
      }`,
      `Use case: ${request.use_case}`,
      `What the agent should do: ${request.activity_description}`
    ].join("\n")
  }
]

/** The follow-up that shows the model its previous answer and what was wrong with it. */
export const correctionMessages = (previousAnswer: string, problems: ReadonlyArray<string>): Array<ChatMessage> => [
  { role: "assistant", content: previousAnswer },
  {
    role: "user",
    content: `That answer cannot be used:\n${
      problems.slice(0, 30).map((problem) => `- ${problem}`).join("\n")
    }\nReturn the corrected JSON only.`
  }
]

export const TEMPLATE_SCHEMA_NAME = "agent_template"
