import { mayStillBeBackchannel, substantiveWords } from "./backchannel.ts"
import type { TurnCommand, TurnDecision } from "./events.ts"
import { callerText, type CallerTurn, emptyTurn, type Replying, type TurnState } from "./state.ts"
import { turnDelay } from "./turnDelay.ts"

/**
 * The decisions time and the caller's words force, whatever the event was: an interruption, a
 * false one undone, the end of the caller's turn, a prepared answer, idle and maximum duration.
 */
export const decide = (state: TurnState, now: number, commands: Array<TurnCommand>): TurnState => {
  if (state.ended) return state
  if (now - state.startedAt >= state.settings.maxDurationMs) {
    commands.push({ _tag: "EndCall", reason: "max_duration_exceeded", goodbye: false })
    return { ...state, ended: true }
  }
  const agent = state.agent
  const next = agent.kind === "replying" && !agent.held
    ? (state.overAgent ? overAgent(state, agent, now, commands) : state)
    : endOfTurn(state, now, commands)
  const { caller } = next
  const pending = caller.stoppedAt !== null || callerText(caller) !== ""
  if (
    !next.ended && next.agent.kind === "silent" && !pending &&
    now - next.lastActivityAt >= next.settings.idleTimeoutMs
  ) {
    commands.push({ _tag: "EndCall", reason: "idle_timeout", goodbye: false })
    return { ...next, ended: true }
  }
  return next
}

/** The caller speaks while the agent's reply is under way: an interruption, a backchannel or noise. */
const overAgent = (state: TurnState, agent: Replying, now: number, commands: Array<TurnCommand>): TurnState => {
  const { caller, settings } = state
  if (caller.startedAt === null) return state
  const heard = callerText(caller)
  const words = substantiveWords(heard, state.language).length
  const settled = caller.stoppedAt !== null && caller.settledAt !== null
  const lasted = (caller.stoppedAt ?? now) - caller.startedAt >= settings.minInterruptMs
  const mayCut = agent.interruptible || !agent.audible
  if (mayCut && ((lasted && words >= settings.minInterruptWords) || (settled && words > 0))) {
    // Not heard yet, the reply answered only part of what the caller is saying: answer it all.
    const carried = agent.audible || agent.text === null
      ? caller
      : { ...caller, words: joined(agent.text, caller.words) }
    commands.push({
      _tag: "CancelReply",
      generation: agent.generation,
      reason: agent.audible ? "interrupted" : "caller-continued"
    })
    if (agent.audible) commands.push({ _tag: "EchoGuard", on: false })
    return endOfTurn({ ...state, agent: { kind: "silent" }, overAgent: false, caller: carried }, now, commands)
  }
  const onlyBackchannel = heard !== "" && words === 0
  if (settled && words === 0) {
    if (agent.paused) commands.push({ _tag: "ResumeReply", generation: agent.generation })
    return { ...state, overAgent: false, caller: emptyTurn, agent: { ...agent, paused: false } }
  }
  if (agent.paused && caller.stoppedAt !== null && now - caller.stoppedAt >= settings.falseInterruptionMs) {
    commands.push({ _tag: "ResumeReply", generation: agent.generation })
    return { ...state, overAgent: false, caller: emptyTurn, agent: { ...agent, paused: false } }
  }
  // With interim words the pause waits for a word that is not a backchannel: a "mm-hmm" or a noise
  // whose first interim is still on its way does not stop the agent (bench/turn-taking.ts counted
  // these pauses as false interruptions), and such a word pauses it at once, however short the
  // speech so far (a cough has no words), unless it may open a backchannel ("I" of "I see").
  // Without interims, any speech long enough pauses it.
  const pause = state.interims
    ? words > 0 && !mayStillBeBackchannel(heard, state.language)
    : lasted && !onlyBackchannel
  if (agent.audible && agent.interruptible && !agent.paused && caller.speaking && pause) {
    // Stopped at once so a real interruption is obeyed quickly; the words decide whether it stands.
    commands.push({ _tag: "PauseReply", generation: agent.generation })
    return { ...state, agent: { ...agent, paused: true } }
  }
  return state
}

const joined = (...parts: ReadonlyArray<string | null>) => parts.filter(Boolean).join(" ")

/** The agent is silent (or holds a prepared answer): has the caller finished their turn? */
const endOfTurn = (state: TurnState, now: number, commands: Array<TurnCommand>): TurnState => {
  const { caller, settings } = state
  if (caller.speaking || caller.stoppedAt === null) return state
  const text = callerText(caller)
  if (caller.settledAt === null) {
    if (now - caller.stoppedAt < settings.transcriptTimeoutMs) return state
    if (text) return takeTurn(state, text, now, null, commands)
    const dropped = dropHeld(state, commands)
    const generation = dropped.generation + 1
    commands.push({ _tag: "SayFallback", generation, reason: "no-transcript" })
    return {
      ...dropped,
      generation,
      caller: emptyTurn,
      agent: {
        kind: "replying",
        generation,
        text: null,
        held: false,
        audible: false,
        interruptible: false,
        paused: false,
        attempt: 1,
        fallback: true
      }
    }
  }
  // Everything said is transcribed, and it was nothing: a noise, a breath.
  if (!text) return { ...dropHeld(state, commands), caller: emptyTurn }
  const delay = turnDelay(state)
  if (now - caller.stoppedAt >= delay) return takeTurn(state, text, now, caller.settledAt, commands, delay)
  return prepare(state, text, commands)
}

/** Model and speech start on what the caller said while the end-of-turn silence still runs. */
const prepare = (state: TurnState, text: string, commands: Array<TurnCommand>): TurnState => {
  if (state.agent.kind === "replying" && state.agent.held && state.agent.text === text) return state
  const dropped = dropHeld(state, commands)
  const generation = dropped.generation + 1
  commands.push({ _tag: "StartReply", generation, text, held: true, attempt: 1 })
  return { ...dropped, generation, agent: heldReply(generation, text) }
}

const heldReply = (generation: number, text: string): Replying => ({
  kind: "replying",
  generation,
  text,
  held: true,
  audible: false,
  interruptible: false,
  paused: false,
  attempt: 1,
  fallback: false
})

const dropHeld = (state: TurnState, commands: Array<TurnCommand>): TurnState => {
  if (state.agent.kind !== "replying" || !state.agent.held) return state
  commands.push({ _tag: "CancelReply", generation: state.agent.generation, reason: "caller-continued" })
  return { ...state, agent: { kind: "silent" } }
}

const takeTurn = (
  state: TurnState,
  text: string,
  now: number,
  transcriptAt: number | null,
  commands: Array<TurnCommand>,
  endpointingMs = state.settings.transcriptTimeoutMs
): TurnState => {
  const caller: CallerTurn = state.caller
  const agent = state.agent
  const prepared = agent.kind === "replying" && agent.held && agent.text === text ? agent : null
  const base = prepared ? state : dropHeld(state, commands)
  const generation = prepared ? prepared.generation : base.generation + 1
  const decision: TurnDecision = {
    generation,
    text,
    speechStartedAt: caller.startedAt ?? caller.stoppedAt!,
    speechStoppedAt: caller.stoppedAt!,
    transcriptAt,
    decidedAt: now,
    endpointingMs
  }
  commands.push({ _tag: "TurnEnded", decision })
  if (prepared) {
    commands.push({ _tag: "ReleaseReply", generation })
    return { ...base, caller: emptyTurn, agent: { ...prepared, held: false } }
  }
  commands.push({ _tag: "StartReply", generation, text, held: false, attempt: 1 })
  return { ...base, generation, caller: emptyTurn, agent: { ...heldReply(generation, text), held: false } }
}
