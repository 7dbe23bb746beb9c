import type { ConversationState, TurnOutcome } from "../../src/conversation/conversationState.ts"
import { KNOWLEDGE_TOOL } from "../../src/conversation/knowledgeTool.ts"
import {
  addUsage,
  noUsage,
  type TokenUsage,
  type TranscriptTurn,
  type TurnTrace
} from "../../src/conversation/transcript.ts"
import type { TurnDecision } from "../../src/voice/turnTaking/mod.ts"

/** How a reply went, for the turns it adds: when the caller's turn was taken and what was heard. */
export interface ReplyRecord {
  /** What it answered (an engine step's user turn; for a reply cut off before its step ended, the caller's words). */
  readonly userText: string | null
  readonly outcome: TurnOutcome | null
  /** A fixed line (fallback, goodbye) in place of an engine step's words. */
  readonly line: string | null
  /** What the caller heard when it was cut short; null: all of it. */
  readonly heard: string | null
  readonly decision: TurnDecision | null
  readonly firstTokenAt: number | null
  readonly firstAudioAt: number | null
  readonly interruptedAt: number | null
  /** The `Clock` time it is recorded at. */
  readonly at: number
}

/**
 * The conversation as the call has it: its state and the tokens spent, and the turns each reply
 * adds (as it is heard, or cut short), handed one by one to the call's `appendTurn`.
 */
export const makeCallConversation = (options: {
  readonly initial: ConversationState
  /** The call's `Clock` time at its first audio: transcript times are ms since then. */
  readonly startedAt: number
  readonly transcript: ReadonlyArray<TranscriptTurn>
  readonly appendTurn: (turn: TranscriptTurn) => void
}) => {
  const { appendTurn, transcript } = options
  let state = options.initial
  let usage: TokenUsage = noUsage
  const sinceStart = (at: number) => Math.max(0, Math.round(at - options.startedAt))

  /**
   * Automatic searches run one after another before the model answers; each round of
   * search_knowledge_base calls runs together, costing its slowest; all of them add up.
   */
  const retrievalMs = (record: ReplyRecord) => {
    const turns = record.outcome?.turns ?? []
    const rounds = [
      ...turns.flatMap((turn) => (turn.retrievals ?? []).map((retrieval) => [retrieval.latency_ms])),
      ...turns.map((turn) =>
        (turn.tool_calls ?? []).filter((call) => call.name === KNOWLEDGE_TOOL).map((call) => call.latency_ms)
      )
    ].filter((latencies) => latencies.length > 0)
    return rounds.length === 0 ? undefined : Math.round(rounds.reduce((sum, round) => sum + Math.max(...round), 0))
  }

  const traceOf = (record: ReplyRecord): TurnTrace | undefined => {
    const retrieval = retrievalMs(record)
    return record.decision === null ? undefined : {
      speech_end_ms: sinceStart(record.decision.speechStoppedAt),
      transcript_ms: record.decision.transcriptAt === null ? null : sinceStart(record.decision.transcriptAt),
      turn_end_ms: sinceStart(record.decision.decidedAt),
      endpointing_ms: record.decision.endpointingMs,
      first_token_ms: record.firstTokenAt === null ? null : sinceStart(record.firstTokenAt),
      first_audio_ms: record.firstAudioAt === null ? null : sinceStart(record.firstAudioAt),
      ...(record.interruptedAt === null ? {} : { interrupted_at_ms: sinceStart(record.interruptedAt) }),
      ...(retrieval === undefined ? {} : { retrieval_ms: retrieval })
    }
  }

  /** Appends what a reply added, the agent's words reduced to what was heard; answers the turns added. */
  const record = (reply: ReplyRecord): ReadonlyArray<TranscriptTurn> => {
    const nodeId = reply.outcome?.state.node_id ?? state.node_id
    const at = new Date(reply.at).toISOString()
    const before = transcript.length
    if (reply.outcome !== null) {
      state = reply.outcome.state
      usage = addUsage(usage, reply.outcome.usage)
    }
    const timing = reply.decision === null ? {} : {
      start_ms: sinceStart(reply.decision.speechStartedAt),
      end_ms: sinceStart(reply.decision.speechStoppedAt)
    }
    const userTurns: ReadonlyArray<TranscriptTurn> = reply.outcome !== null
      ? reply.outcome.turns.filter((turn) => turn.role === "user")
      : reply.userText
      ? [{ role: "user", text: reply.userText, node_id: state.node_id, at }]
      : []
    const keypad = reply.decision?.keypad === undefined ? {} : { keypad: reply.decision.keypad }
    for (const turn of userTurns) appendTurn({ ...turn, ...timing, ...keypad })
    let agentTurns: ReadonlyArray<TranscriptTurn> = reply.line !== null
      ? [{ role: "assistant", text: reply.line, node_id: nodeId, at }]
      : (reply.outcome?.turns ?? []).filter((turn) => turn.role === "assistant")
    if (reply.heard !== null) {
      const first: TranscriptTurn = agentTurns[0] ?? { role: "assistant", text: "", node_id: nodeId, at }
      agentTurns = reply.heard ? [{ ...first, text: reply.heard, interrupted: true }] : []
    }
    const latency = reply.decision !== null && reply.firstAudioAt !== null
      ? Math.max(0, Math.round(reply.firstAudioAt - reply.decision.speechStoppedAt))
      : undefined
    const trace = traceOf(reply)
    agentTurns.forEach((turn, position) =>
      appendTurn({
        ...turn,
        ...(position === 0 && latency !== undefined ? { latency_ms: latency } : {}),
        ...(position === 0 && trace !== undefined ? { trace } : {})
      })
    )
    return transcript.slice(before)
  }

  return {
    record,
    /** Tokens a reply spent though nobody heard it (a prepared answer the caller talked over). */
    spent: (outcome: TurnOutcome) => {
      usage = addUsage(usage, outcome.usage)
    },
    /** A variable the call itself learned (a collect-digits entry), before the model's next step sees the state. */
    setVariable: (name: string, value: string) => {
      state = { ...state, extracted: { ...state.extracted, [name]: value } }
    },
    state: () => state,
    transcript: () => transcript,
    usage: () => usage
  }
}

export type CallConversation = ReturnType<typeof makeCallConversation>
