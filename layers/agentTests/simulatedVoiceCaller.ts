import { Socket } from "@effect/platform"
import { Chunk, Clock, Effect, Fiber, Queue, Stream } from "effect"
import type { SpeechConnection } from "../../services/ModelSettings.ts"
import type { TextToSpeechShape } from "../../services/TextToSpeech.ts"
import type { TestCall } from "../../services/VoiceCalls.ts"
import type { CallerTurn } from "../../src/agentTests/simulatorPrompts.ts"
import type { TranscriptTurn } from "../../src/conversation/transcript.ts"
import { makeMemoryMediaLine } from "../voice/memoryMediaLine.ts"
import type { SimulationClock } from "./simulationClock.ts"

/** The browser protocol's rate and packet (20 ms), which the test call speaks. */
const RATE = 16000
const FRAME_SAMPLES = 320
const FRAME_MS = 20
/** A person answers this long after the agent stops talking. */
const REACTION_MS = 600
/**
 * The call tells each agent turn once it has played and is stored (and ends the call right after
 * its last one); the caller waits for that, or this long after the audio stopped.
 */
const TOLD_WAIT_MS = 3000
/** How long the caller waits for the agent to speak (its greeting, or a reply) before speaking again anyway. */
const WAIT_FOR_AGENT_MS = 8000
/** After the caller hangs up or runs out of turns, how long the call has to end and be stored. */
const HANG_UP_GRACE_MS = 2000
const POLL_MS = 50
/** A caller who interrupts cuts in this far into an agent's reply. */
const INTERRUPT_AFTER_MS = 600

/** What the caller heard: the turns the call reported as spoken (the agent's as played, the caller's as heard). */
export type HeardTurn = Pick<TranscriptTurn, "role" | "text">

export interface VoiceCallerInput<E> {
  readonly call: TestCall
  readonly clock: SimulationClock
  readonly textToSpeech: TextToSpeechShape
  readonly tts: SpeechConnection
  readonly maxTurns: number
  /** The caller talks over each agent reply after its first turn, INTERRUPT_AFTER_MS into it. */
  readonly interrupts: boolean
  /** The caller's next turn, given everything said so far (the clock is paused meanwhile). */
  readonly nextTurn: (heard: ReadonlyArray<HeardTurn>) => Effect.Effect<CallerTurn, E>
}

export interface VoiceCallerOutcome {
  readonly callerTurns: number
  /** Per caller turn the agent answered or let pass: ms from the end of the caller's speech to the agent's next audio. */
  readonly deadAirMs: ReadonlyArray<number>
  /** Simulated ms the call lasted. */
  readonly callMs: number
}

const pcmOf = (bytes: Uint8Array) =>
  new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.byteLength & ~1)))

const bytesOf = (pcm: Int16Array) => new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength)

/**
 * A simulated caller on a voice test call, speaking the browser media protocol on an in-process
 * line: it plays the agent's audio as a phone would (answering marks when their audio has played,
 * dropping it on a clear), streams its own synthesized speech and silence in 20 ms packets, and
 * takes its turn once the agent has been quiet for a person's reaction time. All of it runs on the
 * simulation clock, faster than real time when the clock is; the clock is paused while the
 * caller's own model and voice work, so their latency is not the agent's dead air.
 */
export const holdVoiceCall = <E>(input: VoiceCallerInput<E>): Effect.Effect<VoiceCallerOutcome, E> =>
  Effect.gen(function*() {
    const { call, clock } = input
    const line = yield* makeMemoryMediaLine
    const served = yield* Effect.fork(call.serve(line.line))
    const now = Clock.currentTimeMillis
    const startedAt = yield* now

    const heard: Array<HeardTurn> = []
    const deadAirMs: Array<number> = []
    let closed = false
    let callerTurns = 0
    /** When the agent audio received so far finishes playing at the caller. */
    let agentAudioUntil = 0
    let agentSpokeAt = -1
    let agentToldAt = -1
    /** When the agent's current stretch of audio started playing at the caller. */
    let stretchStartedAt = -1
    /** The caller's speech not yet streamed, and when the last of it was sent (awaiting the agent). */
    let speech: Int16Array = new Int16Array(0)
    let speechEndedAt: number | null = null
    /** Bumped by every clear: a mark scheduled before it was already answered. */
    let clears = 0
    const pendingMarks = new Set<string>()

    const played = (name: string) =>
      Effect.suspend(() => {
        if (!pendingMarks.delete(name)) return Effect.void
        return line.send(JSON.stringify({ event: "played", name }))
      })

    const onServerMessage = (message: string | Uint8Array | Socket.CloseEvent) =>
      Effect.gen(function*() {
        const at = yield* now
        if (Socket.isCloseEvent(message)) {
          closed = true
          return
        }
        if (typeof message !== "string") {
          if (speechEndedAt !== null) {
            deadAirMs.push(at - speechEndedAt)
            speechEndedAt = null
          }
          agentSpokeAt = at
          if (at >= agentAudioUntil) stretchStartedAt = at
          agentAudioUntil = Math.max(agentAudioUntil, at) + (pcmOf(message).length * 1000) / RATE
          return
        }
        const event = JSON.parse(message) as Record<string, unknown>
        switch (event.event) {
          case "mark": {
            const name = String(event.name)
            pendingMarks.add(name)
            const generation = clears
            yield* Effect.sleep(Math.max(0, agentAudioUntil - at)).pipe(
              Effect.zipRight(Effect.suspend(() => generation === clears ? played(name) : Effect.void)),
              Effect.forkDaemon
            )
            return
          }
          case "clear":
            clears++
            agentAudioUntil = at
            yield* Effect.forEach([...pendingMarks], played, { discard: true })
            return
          case "transcript":
            if (event.role === "user" || event.role === "assistant") {
              heard.push({ role: event.role, text: String(event.text ?? "") })
              if (event.role === "assistant") agentToldAt = at
            }
            return
        }
      })

    const reader = yield* Queue.take(line.fromServer).pipe(
      Effect.flatMap(onServerMessage),
      Effect.repeat({ until: () => closed }),
      Effect.fork
    )

    // The line carries audio all the time, silence included, as a phone does; paced on the clock.
    const feeder = yield* Effect.gen(function*() {
      yield* line.send(JSON.stringify({ event: "start", parameters: {} }))
      let due = yield* now
      while (!closed) {
        const frame = new Int16Array(FRAME_SAMPLES)
        if (speech.length > 0) {
          const count = Math.min(FRAME_SAMPLES, speech.length)
          frame.set(speech.subarray(0, count))
          speech = speech.subarray(count)
          if (speech.length === 0) speechEndedAt = due + (count * 1000) / RATE
        }
        yield* line.send(bytesOf(frame))
        due += FRAME_MS
        yield* Effect.sleep(Math.max(0, due - (yield* now)))
      }
    }).pipe(Effect.fork)

    /**
     * The agent has finished: its audio played, a person's pause passed since its turn was told
     * (a call the agent is ending closes meanwhile, so the caller does not talk into the hang-up).
     */
    const agentDone = (since: number) =>
      Effect.map(now, (at) => {
        if (speech.length > 0 || at < Math.max(agentAudioUntil, since) + REACTION_MS) return false
        return agentToldAt > agentSpokeAt ? at >= agentToldAt + REACTION_MS : at >= agentAudioUntil + TOLD_WAIT_MS
      })

    /** An interrupting caller cuts into a reply that began since its last turn (once: after that it is its turn). */
    const cutsIn = (at: number, lastTurnAt: number) =>
      input.interrupts && callerTurns > 0 && speech.length === 0 && stretchStartedAt > lastTurnAt &&
      at < agentAudioUntil && at - stretchStartedAt >= INTERRUPT_AFTER_MS

    /**
     * Waits for the agent to finish speaking and a person's pause, or for it to say nothing for a
     * while, or (an interrupting caller) for the moment to cut in.
     */
    const awaitTurn = (lastTurnAt: number) =>
      Effect.gen(function*() {
        while (!closed) {
          const at = yield* now
          const agentAnswered = agentSpokeAt > lastTurnAt
          if (cutsIn(at, lastTurnAt)) return
          if (agentAnswered && (yield* agentDone(lastTurnAt))) return
          if (!agentAnswered && speech.length === 0 && at - lastTurnAt >= WAIT_FOR_AGENT_MS) {
            // Silence the agent let pass is dead air too.
            if (speechEndedAt !== null) {
              deadAirMs.push(at - speechEndedAt)
              speechEndedAt = null
            }
            return
          }
          yield* Effect.sleep(POLL_MS)
        }
      })

    const synthesize = (text: string) =>
      input.textToSpeech.synthesize(input.tts, text, RATE).pipe(
        Stream.runCollect,
        Effect.map((chunks) => {
          const pcm = new Int16Array(Chunk.reduce(chunks, 0, (total, chunk) => total + chunk.length))
          let offset = 0
          for (const chunk of chunks) {
            pcm.set(chunk, offset)
            offset += chunk.length
          }
          return pcm
        })
      )

    let lastTurnAt = startedAt
    let hangUp = false
    const conversation = Effect.gen(function*() {
      while (!closed && callerTurns < input.maxTurns && !hangUp) {
        yield* awaitTurn(lastTurnAt)
        if (closed) break
        yield* clock.pause
        const turn: { readonly turn: CallerTurn; readonly audio: Int16Array | null } = yield* input.nextTurn(heard)
          .pipe(
            Effect.flatMap((turn) =>
              turn.message === ""
                ? Effect.succeed({ turn, audio: null })
                : Effect.map(
                  Effect.orDie(synthesize(turn.message)),
                  (audio) => ({ turn, audio: audio as Int16Array | null })
                )
            ),
            Effect.ensuring(clock.resume)
          )
        hangUp = turn.turn.hangUp
        if (turn.audio !== null) {
          callerTurns++
          speech = turn.audio
        }
        lastTurnAt = yield* now
        while (!closed && speech.length > 0) yield* Effect.sleep(POLL_MS)
      }
      // Out of turns, the caller still hears the agent's last reply before hanging up.
      if (!closed && !hangUp) yield* awaitTurn(lastTurnAt)
    })

    yield* conversation.pipe(
      Effect.ensuring(Effect.gen(function*() {
        if (!closed) yield* line.close
        yield* Fiber.interrupt(feeder)
        yield* Fiber.await(served).pipe(Effect.timeout(HANG_UP_GRACE_MS), Effect.ignore)
        yield* Fiber.interrupt(reader)
      }))
    )
    return { callerTurns, deadAirMs, callMs: (yield* now) - startedAt }
  })
