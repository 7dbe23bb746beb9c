import { Clock, Effect, Queue } from "effect"
import type { ConversationEngineShape, ConversationPlan } from "../../services/ConversationEngine.ts"
import type { ConversationState, TurnOutcome } from "../../src/conversation/conversationState.ts"
import type { Ending } from "../../src/conversation/endReason.ts"
import { noUsage, type TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { CallTurnSettings } from "../../src/voice/turnTaking/agentSettings.ts"
import type { CallEndReason, TurnCommand, TurnDecision, TurnEvent } from "../../src/voice/turnTaking/mod.ts"
import type { CallConversation } from "./callConversation.ts"
import type { CallTranscription } from "./callTranscription.ts"
import type { Playout } from "./playout.ts"
import { type ReplyReport, type ReplyStep, type SpeakerServices, speakReply, type SpokenReply } from "./replySpeaker.ts"

/** What the control loop hears: the caller and the carrier (as turn events), and its own replies. */
export type CallEvent =
  | TurnEvent
  | { readonly _tag: "Reply"; readonly report: ReplyReport }
  /** A key the caller pressed (the interpreter gathers keys into entries: `src/voice/keypadEntry.ts`). */
  | { readonly _tag: "KeyPressed"; readonly at: number; readonly key: string }

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
  /**
   * The end-of-turn model, when one is configured (null: the heuristic alone): takes the caller's
   * recent audio at once and answers P(their turn is complete), or null when the model failed.
   */
  readonly predictTurnEnd: (() => Effect.Effect<number | null>) | null
  /** Raises voice detection's threshold while the agent speaks (its own echo must not be taken for the caller). */
  readonly echoGuard: (on: boolean) => void
  readonly hangUp: Effect.Effect<void>
  readonly save: (state: ConversationState, transcript: ReadonlyArray<TranscriptTurn>) => Effect.Effect<void>
  readonly settings: CallTurnSettings
  /** The transcription punctuates its text (so a sentence without final punctuation is unfinished from the first turn). */
  readonly transcriptionPunctuates: boolean
  /** The call's `Clock` time at its first audio. */
  readonly startedAt: number
  readonly runId: number
}

export interface InterpreterResult {
  readonly ending: Ending
  readonly latenciesMs: ReadonlyArray<number>
  readonly failures: ReadonlyArray<ProviderFailure>
}

export interface Current {
  readonly reply: SpokenReply
  /** What it answers (null: the opening or a line). */
  readonly text: string | null
  readonly line: string | null
}

/** What the control loop keeps between events; only it (and the commands it runs) change this. */
export interface CallControl {
  /** The reply under way (speaking, held, paused or winding down). */
  current: Current | null
  ending: Ending | null
  /** End with the goodbye line (after repeated provider failures). */
  goodbye: boolean
  /** Each answered turn's end-of-turn decision, by the generation of the reply answering it. */
  readonly decisions: Map<number, TurnDecision>
  readonly latencies: Array<number>
  readonly failures: Array<ProviderFailure>
  /**
   * The model's answer to a prepared reply the caller talked over before hearing it. A caller who
   * went on without saying more words (a breath, a noise) gets it again: the same words have the
   * same answer, and asking the model twice would cost the tokens and the time again.
   */
  answered: { readonly text: string; readonly transcriptLength: number; readonly outcome: TurnOutcome } | null
}

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

/** Carries out the reducer's commands: replies started and stopped, turns recorded, the transcription, the echo guard. */
export const makeTurnCommands = (services: InterpreterServices, control: CallControl) => {
  const { conversation, mailbox, plan, settings } = services

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

  /** A retry (attempt 2) goes to the agent's fallback model when it names one: the first may be down or overloaded. */
  const planFor = (attempt: number): ConversationPlan =>
    attempt > 1 && settings.fallbackModel !== null
      ? { ...plan, connection: { ...plan.connection, model: settings.fallbackModel }, fallbackModel: true }
      : plan

  const start = (generation: number, held: boolean, text: string | null, line: string | null, attempt = 1) =>
    Effect.gen(function*() {
      const asked = planFor(attempt)
      if (control.current !== null) yield* control.current.reply.stop(false)
      const state = conversation.state()
      const history = conversation.transcript().slice()
      const earlier = control.answered !== null && control.answered.text === text &&
          control.answered.transcriptLength === history.length
        ? control.answered.outcome
        : null
      control.answered = null
      const step: ReplyStep = line !== null
        ? (emit) => Effect.as(emit(line), null)
        : text === null
        ? (emit) => services.engine.open(asked, emit)
        : earlier !== null
        ? (emit) =>
          Effect.as(
            Effect.forEach(earlier.turns.filter((turn) => turn.role === "assistant"), (turn) => emit(turn.text), {
              discard: true
            }),
            earlier
          )
        : (emit) => services.engine.respond(asked, state, history, text, emit)
      control.current = { reply: yield* speakReply(speakerServices, generation, held, step), text, line }
    })

  /** Adds what a reply said (all of it, or what was heard of it) to the transcript, and stores it. */
  const record = (reply: Current, heard: string | null, interruptedAt: number | null) =>
    Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      const decision = control.decisions.get(reply.reply.generation) ?? null
      const firstAudioAt = reply.reply.firstAudioAt()
      if (decision !== null && firstAudioAt !== null) control.latencies.push(firstAudioAt - decision.speechStoppedAt)
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
        case "PredictTurnEnd": {
          if (services.predictTurnEnd === null) return
          // The answer comes back as an event; meanwhile the heuristic's deadline keeps running.
          const { speechStoppedAt } = command
          yield* services.predictTurnEnd().pipe(
            Effect.flatMap((complete) =>
              complete === null ? Effect.void : Effect.flatMap(
                Clock.currentTimeMillis,
                (at) => Queue.offer(mailbox, { _tag: "TurnPrediction", at, speechStoppedAt, complete })
              )
            ),
            Effect.fork
          )
          return
        }
        case "StartReply": {
          // A retry answers the same turn: it keeps that turn's decision (its trace and latency).
          const retried = control.current === null ? undefined : control.decisions.get(control.current.reply.generation)
          if (command.attempt > 1 && retried !== undefined) control.decisions.set(command.generation, retried)
          return yield* start(command.generation, command.held, command.text, null, command.attempt)
        }
        case "ReleaseReply":
          if (control.current?.reply.generation === command.generation) yield* control.current.reply.release
          return
        case "PauseReply":
          if (control.current?.reply.generation === command.generation) yield* control.current.reply.pause
          return
        case "ResumeReply":
          if (control.current?.reply.generation === command.generation) yield* control.current.reply.resume
          return
        case "CancelReply": {
          if (control.current?.reply.generation !== command.generation) return
          const cancelled = control.current
          control.current = null
          const heard = yield* cancelled.reply.heard
          yield* cancelled.reply.stop(command.reason !== "call-ended")
          const outcome = cancelled.reply.outcome()
          if (cancelled.reply.audible() && command.reason !== "caller-continued") {
            yield* record(cancelled, heard, yield* Clock.currentTimeMillis)
            // Talking over a goodbye does not undo it: the conversation has ended.
            if (outcome?.ending && control.ending === null) control.ending = outcome.ending
          } else if (outcome !== null) {
            // Its tokens were spent even though nobody heard it.
            conversation.spent(outcome)
            if (command.reason === "caller-continued" && cancelled.text !== null && cancelled.line === null) {
              control.answered = {
                text: cancelled.text,
                transcriptLength: conversation.transcript().length,
                outcome: { ...outcome, usage: noUsage }
              }
            }
          }
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
          control.decisions.set(command.decision.generation, command.decision)
          return
        case "ProviderFailed": {
          const at = yield* Clock.currentTimeMillis
          control.failures.push({ provider: command.provider, reason: command.reason, at_ms: at - services.startedAt })
          return yield* Effect.logWarning("A provider failed during a call; the call goes on").pipe(
            Effect.annotateLogs({ run_id: services.runId, provider: command.provider, reason: command.reason })
          )
        }
        case "EndCall":
          if (control.ending === null) control.ending = endingOf(command.reason, control.failures)
          control.goodbye = command.goodbye
          return
      }
    })

  return { execute, record, start, settingsAt }
}
