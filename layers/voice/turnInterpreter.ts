import { Clock, Effect, Option, Queue } from "effect"
import type { ConversationEngineShape, ConversationPlan } from "../../services/ConversationEngine.ts"
import type { ConversationState } from "../../src/conversation/conversationState.ts"
import type { Ending } from "../../src/conversation/endReason.ts"
import type { TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { CallTurnSettings } from "../../src/voice/turnTaking/agentSettings.ts"
import {
  type CallEndReason,
  nextDeadline,
  startTurnTaking,
  stepTurnTaking,
  type TurnCommand,
  type TurnDecision,
  type TurnEvent,
  type TurnState
} from "../../src/voice/turnTaking/mod.ts"
import type { CallConversation } from "./callConversation.ts"
import type { CallTranscription } from "./callTranscription.ts"
import type { Playout } from "./playout.ts"
import { type ReplyReport, type ReplyStep, type SpeakerServices, speakReply, type SpokenReply } from "./replySpeaker.ts"

/** What the control loop hears: the caller and the carrier (as turn events), and its own replies. */
export type CallEvent = TurnEvent | { readonly _tag: "Reply"; readonly report: ReplyReport }

/** A provider failure the call survived (or ended on), for the run's record. */
export interface ProviderFailure {
  readonly provider: "llm" | "tts" | "stt"
  readonly reason: string
  readonly at_ms: number
}

export interface InterpreterServices {
  readonly mailbox: Queue.Queue<CallEvent>
  readonly conversation: CallConversation
  readonly engine: ConversationEngineShape
  readonly plan: ConversationPlan
  readonly speaker: Omit<SpeakerServices, "report" | "interruptible">
  readonly playout: Playout
  readonly transcription: Pick<CallTranscription, "finalize" | "restart">
  /** Raises voice detection's threshold while the agent speaks (its own echo must not be taken for the caller). */
  readonly echoGuard: (on: boolean) => void
  readonly hangUp: Effect.Effect<void>
  readonly save: (state: ConversationState, transcript: ReadonlyArray<TranscriptTurn>) => Effect.Effect<void>
  readonly settings: CallTurnSettings
  /** The call's `Clock` time at its first audio. */
  readonly startedAt: number
  readonly runId: number
}

export interface InterpreterResult {
  readonly ending: Ending
  readonly latenciesMs: ReadonlyArray<number>
  readonly failures: ReadonlyArray<ProviderFailure>
}

interface Current {
  readonly reply: SpokenReply
  /** What it answers (null: the opening or a line). */
  readonly text: string | null
  readonly line: string | null
}

const turnEvent = (event: TurnEvent): TurnEvent | null => event
const noEvent: TurnEvent | null = null

/** A timer that found nothing to change is not set again sooner than this. */
const MIN_TICK_MS = 50
/** The agent's last words are heard before the line drops, within this bound. */
const LAST_WORDS_MS = 10_000

const endingOf = (reason: CallEndReason, failures: ReadonlyArray<ProviderFailure>): Ending => {
  if (reason !== "provider_failures") return { reason, error: null }
  const last = failures.at(-1)
  return {
    reason: last?.provider === "llm" ? "llm_error" : "speech_error",
    error: `The call ended after ${failures.length} provider failures in a row; the last: ${
      last ? `${last.provider} (${last.reason})` : "unknown"
    }`
  }
}

/**
 * Drives one call from the turn-taking reducer (`src/voice/turnTaking`): a single control loop
 * feeds it events (the caller's speech and words, the replies' progress, a timer at the reducer's
 * next deadline) and carries out its commands with fibers it owns (each reply's speaker, the
 * transcription, the carrier's audio). Every decision is the reducer's; time is the `Clock`'s.
 */
export const runTurnInterpreter = (services: InterpreterServices): Effect.Effect<InterpreterResult> =>
  Effect.gen(function*() {
    const { conversation, mailbox, plan, playout, settings } = services
    const latencies: Array<number> = []
    const failures: Array<ProviderFailure> = []
    const decisions = new Map<number, TurnDecision>()
    let current: Current | null = null
    let ending: Ending | null = null
    let goodbye = false

    /** The reducer's settings at a node: the agent's, with the node's own endpointing when it sets one. */
    const settingsAt = (nodeId: string) => {
      const node = plan.graph.nodes.find((candidate) => candidate.id === nodeId)
      const own = node?.type === "agentNode" || node?.type === "startCall"
        ? node.data.turn_taking?.endpointing_ms
        : undefined
      return own === undefined ? settings.turnTaking : { ...settings.turnTaking, endpointingMs: own }
    }

    const nodeAllowsInterrupt = (nodeId: string | null) => {
      const id = nodeId ?? conversation.state().node_id
      const node = plan.graph.nodes.find((candidate) => candidate.id === id)
      return (node?.type === "agentNode" || node?.type === "startCall") && node.data.allow_interrupt === true
    }
    const speakerServices: SpeakerServices = {
      ...services.speaker,
      interruptible: nodeAllowsInterrupt,
      report: (report) => Queue.offer(mailbox, { _tag: "Reply", report }).pipe(Effect.asVoid)
    }

    const start = (generation: number, held: boolean, text: string | null, line: string | null) =>
      Effect.gen(function*() {
        if (current !== null) yield* current.reply.stop(false)
        const state = conversation.state()
        const history = conversation.transcript().slice()
        const step: ReplyStep = line !== null
          ? (emit) => Effect.as(emit(line), null)
          : text === null
          ? (emit) => services.engine.open(plan, emit)
          : (emit) => services.engine.respond(plan, state, history, text, emit)
        current = { reply: yield* speakReply(speakerServices, generation, held, step), text, line }
      })

    /** Adds what a reply said (all of it, or what was heard of it) to the transcript, and stores it. */
    const record = (reply: Current, heard: string | null, interruptedAt: number | null) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const decision = decisions.get(reply.reply.generation) ?? null
        const firstAudioAt = reply.reply.firstAudioAt()
        if (decision !== null && firstAudioAt !== null) latencies.push(firstAudioAt - decision.speechStoppedAt)
        const added = conversation.record({
          userText: reply.text,
          outcome: reply.reply.outcome(),
          line: reply.line,
          heard,
          decision,
          firstTokenAt: reply.reply.firstTokenAt(),
          firstAudioAt,
          interruptedAt,
          at
        })
        for (const turn of added) {
          if (turn.trace !== undefined) yield* traceSpan(turn)
        }
        yield* services.save(conversation.state(), conversation.transcript())
      })

    const traceSpan = (turn: TranscriptTurn) =>
      Effect.void.pipe(Effect.withSpan("CallSession.turn", {
        attributes: {
          run_id: services.runId,
          node_id: turn.node_id,
          interrupted: turn.interrupted === true,
          ...Object.fromEntries(Object.entries(turn.trace ?? {}).map(([key, value]) => [`turn.${key}`, value]))
        }
      }))

    const execute = (command: TurnCommand): Effect.Effect<void> =>
      Effect.gen(function*() {
        switch (command._tag) {
          case "FlushTranscription":
            return yield* services.transcription.finalize
          case "RestartTranscription":
            return yield* services.transcription.restart
          case "StartReply": {
            // A retry answers the same turn: it keeps that turn's decision (its trace and latency).
            const retried = current === null ? undefined : decisions.get(current.reply.generation)
            if (command.attempt > 1 && retried !== undefined) decisions.set(command.generation, retried)
            return yield* start(command.generation, command.held, command.text, null)
          }
          case "ReleaseReply":
            if (current?.reply.generation === command.generation) yield* current.reply.release
            return
          case "PauseReply":
            if (current?.reply.generation === command.generation) yield* current.reply.pause
            return
          case "ResumeReply":
            if (current?.reply.generation === command.generation) yield* current.reply.resume
            return
          case "CancelReply": {
            if (current?.reply.generation !== command.generation) return
            const cancelled = current
            current = null
            const heard = yield* cancelled.reply.heard
            yield* cancelled.reply.stop(command.reason !== "call-ended")
            const outcome = cancelled.reply.outcome()
            if (cancelled.reply.audible() && command.reason !== "caller-continued") {
              yield* record(cancelled, heard, yield* Clock.currentTimeMillis)
              // Talking over a goodbye does not undo it: the conversation has ended.
              if (outcome?.ending && ending === null) ending = outcome.ending
            } else if (outcome !== null) conversation.spent(outcome)
            return
          }
          case "SayFallback":
            return yield* start(
              command.generation,
              false,
              null,
              settings.fallbackLine
            )
          case "EchoGuard":
            return services.echoGuard(command.on)
          case "TurnEnded":
            decisions.set(command.decision.generation, command.decision)
            return
          case "ProviderFailed": {
            const at = yield* Clock.currentTimeMillis
            failures.push({ provider: command.provider, reason: command.reason, at_ms: at - services.startedAt })
            return yield* Effect.logWarning("A provider failed during a call; the call goes on").pipe(
              Effect.annotateLogs({ run_id: services.runId, provider: command.provider, reason: command.reason })
            )
          }
          case "EndCall":
            if (ending === null) ending = endingOf(command.reason, failures)
            goodbye = command.goodbye
            return
        }
      })

    /** A reply's report as the reducer's event; a completed reply's words join the transcript first. */
    const turnEventOf = (report: ReplyReport): Effect.Effect<TurnEvent | null> =>
      Effect.gen(function*() {
        const mine = current?.reply.generation === report.generation ? current : null
        switch (report._tag) {
          case "AudioStarted":
            return turnEvent({
              _tag: "ReplyAudioStarted",
              at: report.at,
              generation: report.generation,
              interruptible: report.interruptible
            })
          case "Failed":
            return turnEvent({
              _tag: "ReplyFailed",
              at: report.at,
              generation: report.generation,
              provider: report.provider,
              reason: report.reason,
              heard: report.heard
            })
          case "Completed": {
            if (mine === null) return noEvent
            current = null
            yield* mine.reply.stop(false)
            yield* record(mine, null, null)
            const outcome = mine.reply.outcome()
            const said = outcome?.turns.filter((turn) => turn.role === "assistant").at(-1)?.text ?? mine.line ?? ""
            if (outcome?.ending && ending === null) ending = outcome.ending
            return turnEvent({
              _tag: "ReplyCompleted",
              at: report.at,
              generation: report.generation,
              askedQuestion: /\?["'”’)]*\s*$/u.test(said),
              endsCall: outcome?.ending != null
            })
          }
        }
      })

    /** The polite end after repeated failures: the goodbye line, if it can still be said. */
    const sayGoodbye = Effect.gen(function*() {
      const generation = state.generation + 1
      yield* start(generation, false, null, settings.goodbyeLine)
      const said = yield* Queue.take(mailbox).pipe(
        Effect.repeat({
          until: (event) =>
            event._tag === "CallerHungUp" ||
            (event._tag === "Reply" && event.report.generation === generation && event.report._tag !== "AudioStarted")
        }),
        Effect.timeout(LAST_WORDS_MS),
        Effect.option
      )
      const spoken: Current | null = current
      current = null
      if (spoken === null) return
      yield* spoken.reply.stop(false)
      if (Option.isSome(said) && said.value._tag === "Reply" && said.value.report._tag === "Completed") {
        yield* record(spoken, null, null)
      }
    })

    let node = conversation.state().node_id
    const first = startTurnTaking(yield* Clock.currentTimeMillis, {
      settings: settingsAt(node),
      language: settings.language
    })
    let state: TurnState = first.state
    yield* Effect.forEach(first.commands, execute, { discard: true })
    let lastTick = Number.NEGATIVE_INFINITY
    while (ending === null && !state.ended) {
      const deadline = nextDeadline(state)
      const now = yield* Clock.currentTimeMillis
      const due = deadline === null ? null : Math.max(deadline, lastTick + MIN_TICK_MS)
      const next = due === null
        ? yield* Effect.map(Queue.take(mailbox), Option.some)
        : yield* Queue.take(mailbox).pipe(Effect.timeoutOption(Math.max(0, due - now)))
      let event: TurnEvent | null
      if (Option.isNone(next)) {
        lastTick = yield* Clock.currentTimeMillis
        event = { _tag: "Tick", at: lastTick }
      } else event = next.value._tag === "Reply" ? yield* turnEventOf(next.value.report) : next.value
      if (event === null) continue
      const stepped = stepTurnTaking(state, event)
      state = stepped.state
      yield* Effect.forEach(stepped.commands, execute, { discard: true })
      if (conversation.state().node_id !== node) {
        node = conversation.state().node_id
        state = { ...state, settings: settingsAt(node) }
      }
      if (state.ended && ending === null) ending = { reason: "end_node_reached", error: null }
    }
    const finalEnding: Ending = ending ?? { reason: "end_node_reached", error: null }

    if (current !== null) {
      const active: Current = current
      current = null
      const heard = yield* active.reply.heard
      yield* active.reply.stop(false)
      if (active.reply.audible()) yield* record(active, heard, yield* Clock.currentTimeMillis)
    }
    if (finalEnding.reason !== "user_hangup") {
      if (goodbye) yield* sayGoodbye
      yield* playout.speaking.pipe(
        Effect.delay("50 millis"),
        Effect.repeat({ while: (speaking) => speaking }),
        Effect.timeout(LAST_WORDS_MS),
        Effect.ignore
      )
      yield* services.hangUp
    }
    return { ending: finalEnding, latenciesMs: latencies, failures }
  })
