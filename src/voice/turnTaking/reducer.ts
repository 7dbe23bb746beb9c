import { substantiveWords } from "./backchannel.ts"
import { decide } from "./decisions.ts"
import { type EndpointingDelay, heuristicEndpointing } from "./endpointing.ts"
import type { TurnCommand, TurnEvent } from "./events.ts"
import { defaultTurnTakingSettings, type TurnTakingSettings } from "./settings.ts"
import { callerText, type CallerTurn, emptyTurn, type Replying, type TurnState } from "./state.ts"
import { turnDelay } from "./turnDelay.ts"

export interface TurnStep {
  readonly state: TurnState
  readonly commands: ReadonlyArray<TurnCommand>
}

export interface TurnTakingOptions {
  readonly settings?: TurnTakingSettings
  readonly endpointing?: EndpointingDelay
  readonly language?: string
  /**
   * The call's transcription is known to punctuate (a provider asked to): a sentence without final
   * punctuation is unfinished from the first turn on. Otherwise the call learns it from the first
   * punctuated transcript.
   */
  readonly punctuated?: boolean
}

/** A call that has just connected: the agent opens it (greeting or first words). */
export const startTurnTaking = (at: number, options: TurnTakingOptions = {}): TurnStep => {
  const state: TurnState = {
    settings: options.settings ?? defaultTurnTakingSettings,
    endpointing: options.endpointing ?? heuristicEndpointing,
    language: options.language ?? "en",
    startedAt: at,
    generation: 1,
    agent: reply(1, null, { held: false, attempt: 1, fallback: false }),
    caller: emptyTurn,
    overAgent: false,
    lastActivityAt: at,
    agentAskedQuestion: false,
    punctuated: options.punctuated ?? false,
    interims: false,
    failures: 0,
    ended: false
  }
  return { state, commands: [{ _tag: "StartReply", generation: 1, text: null, held: false, attempt: 1 }] }
}

const reply = (
  generation: number,
  text: string | null,
  options: { readonly held: boolean; readonly attempt: number; readonly fallback: boolean }
): Replying => ({
  kind: "replying",
  generation,
  text,
  audible: false,
  interruptible: false,
  paused: false,
  ...options
})

/**
 * One event's effect on the call: the new state and what the interpreter must do. Pure: time is
 * the event's `at`, so every rule is tested with plain numbers.
 */
export const stepTurnTaking = (state: TurnState, event: TurnEvent): TurnStep => {
  if (state.ended) return { state, commands: [] }
  const commands: Array<TurnCommand> = []
  const next = decide(apply(state, event, commands), event.at, commands)
  return { state: next, commands }
}

/** The earliest time at which the state would change with no event but the clock's (null: none). */
export const nextDeadline = (state: TurnState): number | null => {
  if (state.ended) return null
  const { caller, settings } = state
  const deadlines = [state.startedAt + settings.maxDurationMs]
  if (state.agent.kind === "silent" && !turnPending(caller)) {
    deadlines.push(state.lastActivityAt + settings.idleTimeoutMs)
  }
  if (caller.stoppedAt !== null) {
    if (state.overAgent && state.agent.kind === "replying" && state.agent.paused) {
      deadlines.push(caller.stoppedAt + settings.falseInterruptionMs)
    } else if (caller.settledAt === null) deadlines.push(caller.stoppedAt + settings.transcriptTimeoutMs)
    else if (callerText(caller)) deadlines.push(caller.stoppedAt + turnDelay(state))
  }
  if (state.overAgent && caller.speaking && caller.startedAt !== null) {
    deadlines.push(caller.startedAt + settings.minInterruptMs)
  }
  return Math.min(...deadlines)
}

const turnPending = (caller: CallerTurn) => caller.stoppedAt !== null || callerText(caller) !== ""

const speakingAgent = (state: TurnState): Replying | null =>
  state.agent.kind === "replying" && !state.agent.held ? state.agent : null

const apply = (state: TurnState, event: TurnEvent, commands: Array<TurnCommand>): TurnState => {
  const { caller } = state
  switch (event._tag) {
    case "CallerSpeechStarted": {
      let next = state
      if (state.agent.kind === "replying" && state.agent.held) {
        // The caller went on: what was prepared for their pause is not the answer any more.
        commands.push({ _tag: "CancelReply", generation: state.agent.generation, reason: "caller-continued" })
        next = { ...next, agent: { kind: "silent" } }
      }
      const overAgent = speakingAgent(next) !== null && (caller.startedAt === null || state.overAgent)
      return {
        ...next,
        overAgent,
        caller: {
          ...caller,
          speaking: true,
          startedAt: caller.startedAt ?? event.at,
          stoppedAt: null,
          settledAt: null,
          completeProbability: null
        }
      }
    }
    case "CallerSpeechStopped": {
      if (!caller.speaking) return state
      commands.push({ _tag: "FlushTranscription" }, { _tag: "PredictTurnEnd", speechStoppedAt: event.at })
      return {
        ...state,
        caller: { ...caller, speaking: false, stoppedAt: event.at, settledAt: null, completeProbability: null }
      }
    }
    case "TurnPrediction":
      // An answer about a stop the caller has since talked past is not about this pause.
      if (caller.speaking || caller.stoppedAt !== event.speechStoppedAt) return state
      return { ...state, caller: { ...caller, completeProbability: event.complete } }
    case "TranscriptInterim":
      return {
        ...state,
        interims: true,
        lastActivityAt: event.text.trim() ? event.at : state.lastActivityAt,
        caller: { ...caller, interim: event.text.trim() }
      }
    case "TranscriptFinal": {
      const text = event.text.trim()
      const words = [caller.words, text].filter(Boolean).join(" ")
      const settledAt = event.settled && caller.stoppedAt !== null ? event.at : caller.settledAt
      return {
        ...state,
        punctuated: state.punctuated || /[.?!]/.test(text),
        lastActivityAt: text ? event.at : state.lastActivityAt,
        caller: { ...caller, words, interim: "", settledAt }
      }
    }
    case "TranscriptionFailed": {
      commands.push({ _tag: "ProviderFailed", provider: "stt", reason: event.reason })
      const failed = failure(state, commands)
      if (failed.ended) return failed
      commands.push({ _tag: "RestartTranscription" })
      // What the caller said is lost: ask again rather than leave them waiting.
      return failed.caller.stoppedAt !== null && failed.agent.kind === "silent"
        ? sayFallback({ ...failed, caller: emptyTurn }, "no-transcript", commands)
        : failed
    }
    case "ReplyAudioStarted": {
      const agent = speakingAgent(state)
      if (agent?.generation !== event.generation) return state
      commands.push({ _tag: "EchoGuard", on: true })
      return { ...state, agent: { ...agent, audible: true, interruptible: event.interruptible } }
    }
    case "ReplyCompleted": {
      const agent = speakingAgent(state)
      if (agent?.generation !== event.generation) return state
      if (agent.audible) commands.push({ _tag: "EchoGuard", on: false })
      if (event.endsCall) return { ...state, agent: { kind: "silent" }, ended: true }
      return {
        ...state,
        agent: { kind: "silent" },
        overAgent: false,
        caller: state.overAgent ? keepIfSubstantive(state) : caller,
        lastActivityAt: event.at,
        agentAskedQuestion: event.askedQuestion,
        failures: agent.fallback ? state.failures : 0
      }
    }
    case "ReplyFailed": {
      const agent = state.agent
      if (agent.kind !== "replying" || agent.generation !== event.generation) return state
      commands.push({ _tag: "ProviderFailed", provider: event.provider, reason: event.reason })
      const failed = failure(state, commands)
      if (failed.ended) return failed
      if (agent.attempt < 2 && !event.heard && !agent.fallback) {
        const generation = state.generation + 1
        commands.push({ _tag: "StartReply", generation, text: agent.text, held: agent.held, attempt: 2 })
        return {
          ...failed,
          generation,
          agent: reply(generation, agent.text, { held: agent.held, attempt: 2, fallback: false })
        }
      }
      // The caller is asked to say it again: what they said is not answered after the line as well.
      const asked = failed.caller.speaking ? failed : { ...failed, caller: emptyTurn, overAgent: false }
      return sayFallback(asked, "provider-failed", commands)
    }
    case "CallerHungUp": {
      if (state.agent.kind === "replying") {
        commands.push({ _tag: "CancelReply", generation: state.agent.generation, reason: "call-ended" })
      }
      commands.push({ _tag: "EndCall", reason: "user_hangup", goodbye: false })
      return { ...state, agent: { kind: "silent" }, ended: true }
    }
    case "KeypadEntry": {
      const agent = state.agent
      if (agent.kind === "replying") {
        commands.push({
          _tag: "CancelReply",
          generation: agent.generation,
          reason: agent.held ? "caller-continued" : "interrupted"
        })
        if (agent.audible && !agent.held) commands.push({ _tag: "EchoGuard", on: false })
      }
      const generation = state.generation + 1
      commands.push({
        _tag: "TurnEnded",
        decision: {
          generation,
          text: event.text,
          speechStartedAt: event.at,
          speechStoppedAt: event.at,
          transcriptAt: null,
          decidedAt: event.at,
          endpointingMs: 0,
          keypad: event.digits
        }
      })
      commands.push({ _tag: "StartReply", generation, text: event.text, held: false, attempt: 1 })
      return {
        ...state,
        generation,
        overAgent: false,
        // Words the caller said around the keys are not a turn of their own any more.
        caller: { ...emptyTurn, speaking: caller.speaking, startedAt: caller.speaking ? event.at : null },
        lastActivityAt: event.at,
        agent: reply(generation, event.text, { held: false, attempt: 1, fallback: false })
      }
    }
    case "Tick":
      return state
  }
}

/** One more failure in a row; too many end the call with a goodbye. */
const failure = (state: TurnState, commands: Array<TurnCommand>): TurnState => {
  const failures = state.failures + 1
  if (failures < state.settings.maxProviderFailures) return { ...state, failures }
  if (state.agent.kind === "replying") {
    commands.push({ _tag: "CancelReply", generation: state.agent.generation, reason: "call-ended" })
  }
  commands.push({ _tag: "EndCall", reason: "provider_failures", goodbye: true })
  return { ...state, failures, agent: { kind: "silent" }, ended: true }
}

const sayFallback = (
  state: TurnState,
  reason: "no-transcript" | "provider-failed",
  commands: Array<TurnCommand>
): TurnState => {
  const generation = state.generation + 1
  commands.push({ _tag: "SayFallback", generation, reason })
  return { ...state, generation, agent: reply(generation, null, { held: false, attempt: 1, fallback: true }) }
}

/** What the caller said over the agent stays their turn only if it was more than a backchannel. */
const keepIfSubstantive = (state: TurnState): CallerTurn =>
  state.caller.speaking || substantiveWords(callerText(state.caller), state.language).length > 0
    ? state.caller
    : emptyTurn
