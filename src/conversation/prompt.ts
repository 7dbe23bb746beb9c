import type { WorkflowGraph, WorkflowNode } from "../graph/definition.ts"
import { renderTemplate } from "../graph/templateVariables.ts"
import type { Context } from "./runContext.ts"
import type { TranscriptTurn } from "./transcript.ts"

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

/** The global node's prompt applies to every node unless that node opts out (`add_global_prompt: false`). */
export const systemPromptFor = (graph: WorkflowGraph, node: WorkflowNode, context: Context): string => {
  const global = graph.nodes.find((candidate) => candidate.type === "globalNode")
  const wantsGlobal = node.type !== "globalNode" && node.data.add_global_prompt !== false
  const parts = [...(global && wantsGlobal ? [global.data.prompt] : []), node.data.prompt]
  return parts.map((part) => renderTemplate(part, context).trim()).filter((part) => part !== "").join("\n\n")
}

/** The model sees the node's instructions, then the whole conversation so far. */
export const messagesFor = (systemPrompt: string, history: ReadonlyArray<TranscriptTurn>): Array<ChatMessage> => [
  { role: "system", content: systemPrompt },
  ...history.map((turn): ChatMessage => ({ role: turn.role, content: turn.text }))
]

/**
 * The node's instructions for the one request that follows a silent `end_call`: a model that
 * ends the conversation without a word would leave the user, or the caller, with nothing.
 */
export const farewellPromptFor = (systemPrompt: string): string =>
  [
    systemPrompt,
    "The conversation is ending now. Reply only with a short, polite goodbye to the user, in the language of the conversation."
  ]
    .filter((part) => part !== "")
    .join("\n\n")
