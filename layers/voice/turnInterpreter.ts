import { Clock, Effect, Option, Queue } from "effect"
import type { Ending } from "../../src/conversation/endReason.ts"
import {
  defaultKeypadSettings,
  emptyKeypad,
  keypadDeadline,
  type KeypadEntry,
  keypadEntryText,
  type KeypadSettings,
  type KeypadState,
  keypadTick,
  pressKey
} from "../../src/voice/keypadEntry.ts"
import {
  nextDeadline,
  startTurnTaking,
  stepTurnTaking,
  type TurnEvent,
  type TurnState
} from "../../src/voice/turnTaking/mod.ts"
import type { ReplyReport } from "./replySpeaker.ts"
import {
  type CallControl,
  type Current,
  type InterpreterResult,
  type InterpreterServices,
  makeTurnCommands
} from "./turnCommands.ts"

export type { CallEvent, InterpreterResult, InterpreterServices, ProviderFailure } from "./turnCommands.ts"

const turnEvent = (event: TurnEvent): TurnEvent | null => event
const noEvent: TurnEvent | null = null

/** A timer that found nothing to change is not set again sooner than this. */
const MIN_TICK_MS = 50
/** The agent's last words are heard before the line drops, within this bound. */
const LAST_WORDS_MS = 10_000

/**
 * Drives one call from the turn-taking reducer (`src/voice/turnTaking`): a single control loop
 * feeds it events (the caller's speech and words, the replies' progress, a timer at the reducer's
 * next deadline) and carries out its commands with fibers it owns (each reply's speaker, the
 * transcription, the carrier's audio). Every decision is the reducer's; time is the `Clock`'s.
 */
export const runTurnInterpreter = (services: InterpreterServices): Effect.Effect<InterpreterResult> =>
  Effect.gen(function*() {
    const { conversation, mailbox, playout, settings } = services
    const control: CallControl = {
      current: null,
      ending: null,
      goodbye: false,
      decisions: new Map(),
      latencies: [],
      failures: [],
      answered: null
    }
    const { execute, record, start, settingsAt } = makeTurnCommands(services, control)

    /** A reply's report as the reducer's event; a completed reply's words join the transcript first. */
    const turnEventOf = (report: ReplyReport): Effect.Effect<TurnEvent | null> =>
      Effect.gen(function*() {
        const mine = control.current?.reply.generation === report.generation ? control.current : null
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
            control.current = null
            yield* mine.reply.stop(false)
            yield* record(mine, null, null)
            const outcome = mine.reply.outcome()
            const said = outcome?.turns.filter((turn) => turn.role === "assistant").at(-1)?.text ?? mine.line ?? ""
            if (outcome?.ending && control.ending === null) control.ending = outcome.ending
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
      const spoken: Current | null = control.current
      control.current = null
      if (spoken === null) return
      yield* spoken.reply.stop(false)
      if (Option.isSome(said) && said.value._tag === "Reply" && said.value.report._tag === "Completed") {
        yield* record(spoken, null, null)
      }
    })

    /** How keys are gathered at a node: its collect-digits step, else the default. */
    const keypadAt = (nodeId: string): { readonly settings: KeypadSettings; readonly variable: string | null } => {
      const found = services.plan.graph.nodes.find((candidate) => candidate.id === nodeId)
      const collect = found?.type === "globalNode" ? undefined : found?.data.collect_digits
      if (collect === undefined) return { settings: defaultKeypadSettings, variable: null }
      return {
        settings: {
          maxDigits: collect.max_digits ?? null,
          terminator: collect.terminator === undefined ? "#" : collect.terminator,
          interDigitTimeoutMs: collect.timeout_ms ?? 5000
        },
        variable: collect.variable ?? null
      }
    }
    let keypad: KeypadState = emptyKeypad
    /** A finished entry as the caller's turn; a collect-digits step's variable is set before the model sees it. */
    const entryEvent = (entry: KeypadEntry, at: number): TurnEvent => {
      const variable = keypadAt(conversation.state().node_id).variable
      if (variable !== null) conversation.setVariable(variable, entry.digits)
      return { _tag: "KeypadEntry", at, digits: entry.digits, text: keypadEntryText(entry) }
    }

    let node = conversation.state().node_id
    const first = startTurnTaking(yield* Clock.currentTimeMillis, {
      settings: settingsAt(node),
      language: settings.language,
      punctuated: services.transcriptionPunctuates
    })
    let state: TurnState = first.state
    yield* Effect.forEach(first.commands, execute, { discard: true })
    let lastTick = Number.NEGATIVE_INFINITY
    while (control.ending === null && !state.ended) {
      const keys = keypadAt(node).settings
      const pending = keypadDeadline(keypad, keys)
      const turnDeadline = nextDeadline(state)
      const deadline = pending === null ? turnDeadline : Math.min(pending, turnDeadline ?? pending)
      const now = yield* Clock.currentTimeMillis
      const due = deadline === null ? null : Math.max(deadline, lastTick + MIN_TICK_MS)
      const next = due === null
        ? yield* Effect.map(Queue.take(mailbox), Option.some)
        : yield* Queue.take(mailbox).pipe(Effect.timeoutOption(Math.max(0, due - now)))
      let event: TurnEvent | null
      if (Option.isNone(next)) {
        lastTick = yield* Clock.currentTimeMillis
        const ticked = keypadTick(keypad, lastTick, keys)
        keypad = ticked.state
        event = ticked.entry === null ? { _tag: "Tick", at: lastTick } : entryEvent(ticked.entry, lastTick)
      } else if (next.value._tag === "KeyPressed") {
        const pressed = pressKey(keypad, next.value.key, next.value.at, keys)
        keypad = pressed.state
        event = pressed.entry === null ? null : entryEvent(pressed.entry, next.value.at)
      } else event = next.value._tag === "Reply" ? yield* turnEventOf(next.value.report) : next.value
      if (event === null) continue
      const stepped = stepTurnTaking(state, event)
      state = stepped.state
      yield* Effect.forEach(stepped.commands, execute, { discard: true })
      if (conversation.state().node_id !== node) {
        node = conversation.state().node_id
        state = { ...state, settings: settingsAt(node) }
      }
      if (state.ended && control.ending === null) control.ending = { reason: "end_node_reached", error: null }
    }
    const finalEnding: Ending = control.ending ?? { reason: "end_node_reached", error: null }

    if (control.current !== null) {
      const active: Current = control.current
      control.current = null
      const heard = yield* active.reply.heard
      yield* active.reply.stop(false)
      if (active.reply.audible()) yield* record(active, heard, yield* Clock.currentTimeMillis)
    }
    if (finalEnding.reason !== "user_hangup") {
      if (control.goodbye) yield* sayGoodbye
      yield* playout.quiet.pipe(Effect.timeout(LAST_WORDS_MS), Effect.ignore)
      yield* services.hangUp
    }
    return { ending: finalEnding, latenciesMs: control.latencies, failures: control.failures }
  })
