import type { WorkflowGraph, WorkflowNode } from "../graph/definition.ts"
import { renderTemplate } from "../graph/templateVariables.ts"
import type { Context } from "./runContext.ts"
import type { TranscriptTurn } from "./transcript.ts"

/** A function call the model made, as it is given back to the model with its result. */
export interface ChatMessageToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

/** A message with text only: what structured requests (extraction, disposition) are made of. */
export interface PlainMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

export type ChatMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly tool_calls?: ReadonlyArray<ChatMessageToolCall> }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string }

/** The global node's prompt applies to every node unless that node opts out (`add_global_prompt: false`). */
export const systemPromptFor = (graph: WorkflowGraph, node: WorkflowNode, context: Context): string => {
  const global = graph.nodes.find((candidate) => candidate.type === "globalNode")
  const wantsGlobal = node.type !== "globalNode" && node.data.add_global_prompt !== false
  const parts = [...(global && wantsGlobal ? [global.data.prompt] : []), node.data.prompt]
  return parts.map((part) => renderTemplate(part, context).trim()).filter((part) => part !== "").join("\n\n")
}

/** A turn as the model reads it: a turn that called tools is followed by each call's result. */
const turnMessages = (turn: TranscriptTurn): Array<ChatMessage> =>
  turn.role === "assistant" && turn.tool_calls && turn.tool_calls.length > 0
    ? [
      {
        role: "assistant",
        content: turn.text,
        tool_calls: turn.tool_calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }))
      },
      ...turn.tool_calls.map((call): ChatMessage => ({ role: "tool", tool_call_id: call.id, content: call.result }))
    ]
    : [{ role: turn.role, content: turn.text }]

/** The model sees the node's instructions, then the whole conversation so far, tool results included. */
export const messagesFor = (systemPrompt: string, history: ReadonlyArray<TranscriptTurn>): Array<ChatMessage> => [
  { role: "system", content: systemPrompt },
  ...history.flatMap(turnMessages)
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
