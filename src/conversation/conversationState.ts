import { Schema } from "effect"
import type { Ending } from "./endReason.ts"
import type { TokenUsage, TranscriptTurn } from "./transcript.ts"

/** Where a conversation stands between turns; stored as `runs.conversation` so any process can continue it. */
export interface ConversationState {
  readonly node_id: string
  /** User messages answered so far (the max-turns limit counts these). */
  readonly user_turns: number
  /** Variables extracted so far, from every node left with extraction enabled. */
  readonly extracted: Readonly<Record<string, unknown>>
}

/** A tool the model called in a step: an edge's transition (from one node to another), or `end_call`. */
export const ToolCallTaken = Schema.Struct({
  name: Schema.String.annotations({ description: "The tool: an edge's transition, or end_call" }),
  from_node_id: Schema.String,
  edge_id: Schema.NullOr(Schema.String).annotations({ description: "The edge followed; null for end_call" }),
  to_node_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ToolCallTaken" })
export type ToolCallTaken = typeof ToolCallTaken.Type

/** What one step of the engine produced: the new state, the turns to append, the tokens spent. */
export interface TurnOutcome {
  readonly state: ConversationState
  readonly turns: ReadonlyArray<TranscriptTurn>
  /** The tools the model called in this step, in order. */
  readonly toolCalls: ReadonlyArray<ToolCallTaken>
  readonly usage: TokenUsage
  /** Set when this step ended the conversation. */
  readonly ending: Ending | null
}

export const initialState = (startNodeId: string): ConversationState => ({
  node_id: startNodeId,
  user_turns: 0,
  extracted: {}
})
