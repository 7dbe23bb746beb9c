import type { EndpointingDelay } from "./endpointing.ts"
import type { TurnTakingSettings } from "./settings.ts"

/** What the caller has said since the agent last took the turn. */
export interface CallerTurn {
  readonly speaking: boolean
  /** When the first speech of this turn began. */
  readonly startedAt: number | null
  /** When the caller last stopped speaking; null while they speak (or before they spoke). */
  readonly stoppedAt: number | null
  /** The final transcript pieces of this turn. */
  readonly words: string
  /** The latest interim transcript since the last final piece. */
  readonly interim: string
  /** Everything said up to `stoppedAt` has been transcribed. */
  readonly settledAt: number | null
  /** The end-of-turn model's P(complete) for the audio up to `stoppedAt`; null: no answer (yet). */
  readonly completeProbability: number | null
}

export const emptyTurn: CallerTurn = {
  speaking: false,
  startedAt: null,
  stoppedAt: null,
  words: "",
  interim: "",
  settledAt: null,
  completeProbability: null
}

export type AgentTurn =
  | { readonly kind: "silent" }
  | {
    readonly kind: "replying"
    readonly generation: number
    /** What it answers (null: the opening or a fallback line). */
    readonly text: string | null
    /** Prepared while the caller may go on: nothing of it is heard yet. */
    readonly held: boolean
    readonly audible: boolean
    readonly interruptible: boolean
    /** Stopped tentatively: the caller may be interrupting. */
    readonly paused: boolean
    readonly attempt: number
    /** A fallback line: its success does not mean the providers recovered. */
    readonly fallback: boolean
  }

export type Replying = Extract<AgentTurn, { kind: "replying" }>

export interface TurnState {
  readonly settings: TurnTakingSettings
  readonly endpointing: EndpointingDelay
  /** The call's language (BCP 47), for backchannels. */
  readonly language: string
  readonly startedAt: number
  readonly generation: number
  readonly agent: AgentTurn
  /** The caller's turn. While the agent speaks it holds what the caller says over it. */
  readonly caller: CallerTurn
  /** The caller began speaking over the agent's audible reply: maybe an interruption. */
  readonly overAgent: boolean
  /** Words or a finished reply last happened then (background noise does not count). */
  readonly lastActivityAt: number
  readonly agentAskedQuestion: boolean
  /** This call's transcription punctuates its text. */
  readonly punctuated: boolean
  /** It gives interim words (so an interruption can be judged by words before the caller stops). */
  readonly interims: boolean
  /** Provider failures in a row. */
  readonly failures: number
  readonly ended: boolean
}

export const callerText = (turn: CallerTurn) => [turn.words, turn.interim].filter(Boolean).join(" ").trim()
