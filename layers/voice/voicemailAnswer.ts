import { Chunk, Clock, Effect, Option, Queue, Stream } from "effect"
import type { SpeechFailed } from "../../services/SpeechToText.ts"
import type { TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { MachineWatchEvent } from "../../src/voice/answeringMachine.ts"
import type { VoicemailPolicy } from "../../src/voice/voicemailPolicy.ts"
import type { Playout } from "./playout.ts"
import type { CallEvent } from "./turnInterpreter.ts"

/** The agent's voicemail policy for one outbound call, its message ready to play. */
export interface VoicemailCall {
  readonly policy: VoicemailPolicy
  /** The message with the call's variables rendered; null when a recording is left instead. */
  readonly messageText: string | null
  /** The stored recording's audio at the call's rate (none when it is gone). */
  readonly messageRecording: Effect.Effect<Option.Option<Int16Array>>
  /** Records the machine's answer where the call's outcome is decided (a campaign's attempt). */
  readonly onMachine: Effect.Effect<void>
}

interface AnswerOptions {
  readonly call: VoicemailCall
  readonly runId: number
  readonly events: Queue.Dequeue<MachineWatchEvent | { readonly _tag: "HungUp" }>
  readonly mailbox: Queue.Queue<CallEvent>
  readonly playout: Playout
  readonly synthesize: (text: string) => Stream.Stream<Int16Array, SpeechFailed>
  readonly countCharacters: (count: number) => void
  readonly hangUp: Effect.Effect<void>
  readonly nodeId: string
  readonly appendTurn: (turn: TranscriptTurn) => void
}

/** A message longer than this is cut off with the call (a machine records a few minutes at most). */
const MESSAGE_MAX_MS = 180_000

/** What the person said while the call listened is their greeting, not a turn to answer. */
const isGreeting = (event: CallEvent) =>
  event._tag === "CallerSpeechStarted" || event._tag === "CallerSpeechStopped" ||
  event._tag === "TranscriptInterim" || event._tag === "TranscriptFinal"

/**
 * Waits for the verdict on who answered. A person (or no verdict in time): the conversation starts,
 * the greeting right after the verdict. A machine: the call ends, with the message left first when
 * the policy says so (at the beep, or once the greeting is over). Returns which it was.
 */
export const awaitAnswer = (options: AnswerOptions): Effect.Effect<"voicemail" | "conversation"> =>
  Effect.gen(function*() {
    const { call, playout } = options
    const verdict = yield* Queue.take(options.events).pipe(
      Effect.repeat({ until: (event) => event._tag === "Decided" || event._tag === "HungUp" })
    )
    if (verdict._tag !== "Decided") return "conversation"
    const { decision } = verdict
    yield* Effect.logInfo("Answering-machine detection decided").pipe(
      Effect.annotateLogs({
        run_id: options.runId,
        verdict: decision.verdict,
        confidence: decision.confidence,
        at_ms: Math.round(decision.atMs),
        cues: decision.cues.join(", ")
      })
    )
    if (decision.verdict !== "machine") {
      const heard = yield* Queue.takeAll(options.mailbox)
      yield* Queue.offerAll(options.mailbox, Chunk.filter(heard, (event) => !isGreeting(event)))
      return "conversation"
    }
    yield* call.onMachine
    if (call.policy.action === "hang_up") {
      yield* options.hangUp
      return "voicemail"
    }
    const cue = yield* Queue.take(options.events).pipe(
      Effect.repeat({ until: (event) => event._tag === "MessageCue" || event._tag === "HungUp" })
    )
    if (cue._tag !== "MessageCue") return "voicemail"
    const startedAt = yield* Clock.currentTimeMillis
    if (call.messageText !== null) {
      options.countCharacters(call.messageText.length)
      yield* options.synthesize(call.messageText).pipe(
        Stream.runForEach(playout.play),
        Effect.catchAll((failure) =>
          Effect.logWarning("The voicemail message could not be synthesized").pipe(
            Effect.annotateLogs({ run_id: options.runId, provider: failure.provider, reason: failure.reason })
          )
        )
      )
    } else {
      const recording = yield* call.messageRecording
      if (Option.isSome(recording)) yield* playout.play(recording.value)
      else yield* Effect.logWarning("The voicemail recording is gone; no message was left", { run_id: options.runId })
    }
    // Until the message has been heard, or the machine hangs up.
    yield* Effect.raceFirst(
      playout.quiet,
      Queue.take(options.events).pipe(Effect.repeat({ until: (event) => event._tag === "HungUp" }))
    ).pipe(Effect.timeout(MESSAGE_MAX_MS), Effect.ignore)
    options.appendTurn({
      role: "assistant",
      text: call.messageText ?? "(voicemail recording)",
      node_id: options.nodeId,
      at: new Date(yield* Clock.currentTimeMillis).toISOString(),
      start_ms: Math.round(cue.atMs),
      end_ms: Math.round(cue.atMs + (yield* Clock.currentTimeMillis) - startedAt)
    })
    yield* options.hangUp
    return "voicemail"
  })
