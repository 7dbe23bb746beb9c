import { Clock, Effect, Fiber, Queue, type Scope, Stream } from "effect"
import type { CallInput, CallServices } from "../../layers/voice/callSession.ts"
import type { ConversationEngineShape, ConversationPlan, TransferResult } from "../../services/ConversationEngine.ts"
import { SpeechFailed, type TranscriptEvent, type TranscriptionSession } from "../../services/SpeechToText.ts"
import type { VoiceActivityShape } from "../../services/VoiceActivity.ts"
import type { TurnOutcome } from "../../src/conversation/conversationState.ts"
import type { Ending } from "../../src/conversation/endReason.ts"
import { validateDefinition } from "../../src/graph/validation.ts"
import type { MediaProtocol, OutboundMedia } from "../../src/telephony/media/mediaProtocol.ts"
import type { TransferEndpoint } from "../../src/tools/transferDestination.ts"
import { type SegmenterSettings, type SegmenterState, segmentWindow, SILENCE } from "../../src/voice/speechSegmenter.ts"

/**
 * In-memory stand-ins for everything a call session talks to, on the `Clock` (so a test drives a
 * whole call under TestClock): a carrier line that plays the agent's audio in real time and echoes
 * marks once played, a voice detector reading the caller's "audio" (each sample's value / 1000 is
 * its speech probability), a transcription that answers each flush after a chosen lag, a TTS that
 * speaks 200 ms per word, and an engine that answers from a script.
 */
export const RATE = 8000
export const AGENT_SAMPLE = 77
const MS_PER_WORD = 200

/** Our own trivial framing: JSON per message, so the line can read what the session sent. */
export const testProtocol: MediaProtocol = {
  sampleRate: RATE,
  receive: () => [],
  audio: (pcm) => [JSON.stringify({ audio: pcm.length })],
  mark: (name) => [JSON.stringify({ mark: name })],
  clear: () => [JSON.stringify({ clear: true })]
}

export interface LineLog {
  /** Ms of agent audio the caller actually heard, with when each piece started playing. */
  readonly heard: Array<{ readonly at: number; readonly ms: number }>
  readonly clears: Array<number>
  hungUp: number | null
}

/** The carrier: plays audio in order in real time; a clear drops what is queued and echoes its marks. */
export const makeLine = (inbound: Queue.Queue<CallInput>) =>
  Effect.sync(() => {
    const log: LineLog = { heard: [], clears: [], hungUp: null }
    let audibleUntil = 0
    const pendingMarks = new Map<string, Fiber.RuntimeFiber<unknown>>()
    const queued: Array<{ at: number; ms: number }> = []
    const send = (messages: ReadonlyArray<OutboundMedia>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        for (const message of messages) {
          const parsed = JSON.parse(message as string) as { audio?: number; mark?: string; clear?: true }
          if (parsed.audio !== undefined) {
            const start = Math.max(now, audibleUntil)
            const ms = (parsed.audio * 1000) / RATE
            audibleUntil = start + ms
            queued.push({ at: start, ms })
          } else if (parsed.mark !== undefined) {
            const name = parsed.mark
            const fiber = yield* Effect.sleep(Math.max(0, audibleUntil - now)).pipe(
              Effect.zipRight(Queue.offer(inbound, { _tag: "Played", name })),
              Effect.zipRight(Effect.sync(() => pendingMarks.delete(name))),
              Effect.forkDaemon
            )
            pendingMarks.set(name, fiber)
          } else if (parsed.clear) {
            log.clears.push(now)
            audibleUntil = now
            // Twilio echoes the marks a clear dropped; the session must ignore them.
            for (const [name, fiber] of pendingMarks) {
              yield* Fiber.interrupt(fiber)
              yield* Queue.offer(inbound, { _tag: "Played", name })
            }
            pendingMarks.clear()
            for (const piece of queued.splice(0)) {
              if (piece.at < now) log.heard.push({ at: piece.at, ms: Math.min(piece.ms, now - piece.at) })
            }
          }
        }
        for (const piece of queued.filter((piece) => piece.at + piece.ms <= now)) {
          log.heard.push(piece)
          queued.splice(queued.indexOf(piece), 1)
        }
      })
    /** Agent audio heard between two times (ms). */
    const heardBetween = (from: number, to: number) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        [
          ...log.heard,
          ...queued.filter((piece) => piece.at < now).map((piece) => ({
            at: piece.at,
            ms: Math.min(piece.ms, now - piece.at)
          }))
        ].reduce((sum, piece) => sum + Math.max(0, Math.min(piece.at + piece.ms, to) - Math.max(piece.at, from)), 0))
    return {
      send,
      log,
      heardBetween,
      hangUp: Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.sync(() => (log.hungUp = at)))
    }
  })

/** Voice detection over the caller's frames: probability = sample value / 1000, segmented by the real rules. */
export const fakeVad = (thresholds: Array<number>): VoiceActivityShape => ({
  detector: (_rate, segmentation) =>
    Effect.sync(() => {
      let settings: SegmenterSettings = { threshold: 0.5, minSpeechMs: 64, minSilenceMs: 400, ...segmentation }
      let state: SegmenterState = SILENCE
      let pushedMs = 0
      return {
        push: (pcm) =>
          Effect.sync(() => {
            const startMs = pushedMs
            pushedMs += (pcm.length * 1000) / RATE
            const next = segmentWindow(state, settings, { startMs, endMs: pushedMs, probability: (pcm[0] ?? 0) / 1000 })
            state = next.state
            return next.events
          }),
        configure: (change) => {
          settings = { ...settings, ...change }
          if (change.threshold !== undefined) thresholds.push(change.threshold)
        }
      }
    })
})

export interface SttScript {
  /** The words of the caller's next utterances, each with how long its final takes after the flush (null: never). */
  readonly answers: Array<{ readonly text: string; readonly lagMs: number | null }>
  readonly finalizes: Array<number>
  /** Emits an event now (interim words while the caller speaks). */
  emit: (event: TranscriptEvent) => Effect.Effect<void>
}

/** A transcription that answers each flush after speech with the next scripted words, `lagMs` later. */
export const fakeStt = (script: SttScript): CallServices["speechToText"] => ({
  open: () =>
    Effect.gen(function*() {
      const events = yield* Queue.unbounded<TranscriptEvent>()
      script.emit = (event) => Queue.offer(events, event).pipe(Effect.asVoid)
      let heardSpeech = false
      let samples = 0
      const session: TranscriptionSession = {
        send: (pcm) =>
          Effect.sync(() => {
            samples += pcm.length
            if ((pcm[0] ?? 0) >= 500) heardSpeech = true
          }),
        finalize: Effect.gen(function*() {
          script.finalizes.push(yield* Clock.currentTimeMillis)
          const answer = heardSpeech ? script.answers.shift() : undefined
          heardSpeech = false
          if (answer === undefined) {
            yield* Queue.offer(events, { _tag: "Final", text: "", speechFinal: true, startMs: 0, endMs: 0 })
            return
          }
          if (answer.lagMs === null) return
          yield* Queue.offer(events, { _tag: "Final", text: answer.text, speechFinal: true, startMs: 0, endMs: 0 })
            .pipe(
              Effect.delay(answer.lagMs),
              Effect.forkDaemon
            )
        }),
        events: Stream.fromQueue(events),
        audioSeconds: Effect.sync(() => samples / RATE)
      }
      return session
    }) as Effect.Effect<TranscriptionSession, SpeechFailed, Scope.Scope>
})

/** TTS: 200 ms of audio per word, after a 50 ms first byte; `fails` says which requests fail. */
export const fakeTts = (requests: Array<string>, fails: (text: string, index: number) => boolean) => ({
  synthesize: (_connection: unknown, text: string) =>
    Stream.unwrap(Effect.sync(() => {
      const index = requests.push(text) - 1
      if (fails(text, index)) {
        return Stream.fail(new SpeechFailed({ provider: "fake-tts", reason: "timeout", message: "no audio" })).pipe(
          Stream.schedule(Effect.sleep(50) as never)
        )
      }
      const words = text.split(/\s+/).length
      const pcm = new Int16Array((RATE * MS_PER_WORD * words) / 1000).fill(AGENT_SAMPLE)
      return Stream.fromEffect(Effect.as(Effect.sleep(50), pcm))
    }))
})

export interface EngineScript {
  readonly greeting: string
  /** Each answer: its text (spoken), an LLM failure, or an ending after it; `transfer`: asked for before the text. */
  readonly answers: Array<
    {
      readonly text?: string
      readonly fail?: true
      readonly ending?: Ending["reason"]
      readonly transfer?: TransferEndpoint
    }
  >
  readonly asked: Array<string>
  /** What each transfer asked for came to, in order. */
  readonly transfers?: Array<TransferResult>
  /** The model each answer was asked of (the plan's connection), in order. */
  readonly models?: Array<string>
}

/** The conversation engine: greets, then answers each caller turn with the next scripted line. */
export const fakeEngine = (script: EngineScript): ConversationEngineShape => {
  const at = new Date(0).toISOString()
  return {
    open: (_plan, emit) =>
      Effect.as(
        emit(script.greeting),
        {
          state: { node_id: "start", user_turns: 0, extracted: {} },
          turns: [{ role: "assistant", text: script.greeting, node_id: "start", at }],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
          ending: null,
          toolCalls: []
        } satisfies TurnOutcome
      ),
    respond: (plan, state, _history, userText, emit) =>
      Effect.gen(function*() {
        script.asked.push(userText)
        script.models?.push(plan.connection.model)
        yield* Effect.sleep(100)
        const answer = script.answers.shift() ?? { text: "Mm." }
        if (answer.fail) {
          return {
            state,
            turns: [],
            usage: { prompt_tokens: 0, completion_tokens: 0 },
            ending: { reason: "llm_error", error: "The model failed" },
            toolCalls: []
          }
        }
        if (answer.transfer !== undefined) {
          const transfer = plan.callActions?.transfer
          if (transfer === undefined) return yield* Effect.die("the call has no carrier to transfer with")
          script.transfers?.push(yield* transfer(answer.transfer, { timeoutSeconds: 20 }))
        }
        yield* emit(answer.text!)
        const next = { ...state, node_id: "talk", user_turns: state.user_turns + 1 }
        return {
          state: next,
          turns: [
            { role: "user", text: userText, node_id: state.node_id, at },
            { role: "assistant", text: answer.text!, node_id: "talk", at }
          ],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
          ending: answer.ending ? { reason: answer.ending, error: null } : null,
          toolCalls: []
        } satisfies TurnOutcome
      }),
    conclude: () => Effect.die("not used")
  }
}

/** greeting (start, interruptible or not) → talk (interruptible). */
export const testPlan = (greetingInterruptible: boolean, talkEndpointingMs?: number): ConversationPlan => {
  const node = (id: string, type: string, data: Record<string, unknown>) => ({
    id,
    type,
    position: { x: 0, y: 0 },
    data
  })
  const { graph } = validateDefinition({
    nodes: [
      node("start", "startCall", {
        name: "Start",
        greeting: "Hello.",
        prompt: "Greet.",
        allow_interrupt: greetingInterruptible
      }),
      node("talk", "agentNode", {
        name: "Talk",
        prompt: "Talk.",
        allow_interrupt: true,
        ...(talkEndpointingMs === undefined ? {} : { turn_taking: { endpointing_ms: talkEndpointingMs } })
      }),
      node("end", "endCall", { name: "End", prompt: "Bye." })
    ],
    edges: [
      { id: "e1", source: "start", target: "talk", data: { label: "Go", condition: "Always" } },
      { id: "e2", source: "talk", target: "end", data: { label: "Done", condition: "Done" } }
    ]
  })
  if (graph === null) throw new Error("the test graph is invalid")
  return {
    graph,
    context: {},
    limits: {},
    dispositionCodes: [],
    connection: { provider: "openai", model: "primary-model", apiKey: null, baseUrl: null }
  } as unknown as ConversationPlan
}
