import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Queue, TestClock } from "effect"
import { type CallInput, type CallSessionInput, runCallSession } from "../layers/voice/callSession.ts"
import { makeInboundBacklog } from "../layers/voice/inboundBacklog.ts"
import type { TransferResult } from "../services/ConversationEngine.ts"
import type { SpeechConnection } from "../services/ModelSettings.ts"
import type { TextToSpeechShape } from "../services/TextToSpeech.ts"
import { TurnModelFailed, type TurnModelShape } from "../services/TurnModel.ts"
import { callTurnSettings, DEFAULT_FALLBACK_LINE, DEFAULT_GOODBYE_LINE } from "../src/voice/turnTaking/mod.ts"
import {
  type EngineScript,
  fakeEngine,
  fakeStt,
  fakeTts,
  fakeVad,
  makeLine,
  type SttScript,
  testPlan,
  testProtocol
} from "./support/fakeCallServices.ts"

const GREETING = "Hello there, this is the agent."
const LONG = "Our panels come in three sizes and each of them suits a different kind of roof. " +
  "The small one suits a flat and the large one suits a farm with a very big roof."
const speech = {} as SpeechConnection

interface CallOptions {
  readonly engine?: Partial<EngineScript>
  readonly greetingInterruptible?: boolean
  readonly ttsFails?: (text: string, index: number) => boolean
  readonly idleTimeoutMs?: number
  readonly maxDurationMs?: number
  readonly talkEndpointingMs?: number
  readonly configurations?: Record<string, unknown>
  readonly turnModel?: TurnModelShape
  /** The call's carrier, given the call's inbound queue (what it delivers, in order). */
  readonly transfer?: (inbound: Queue.Enqueue<CallInput>) => NonNullable<CallSessionInput["transfer"]>
}

/** A call under TestClock with in-memory services; the helpers play the caller, 20 ms frame by frame. */
const startCall = (options: CallOptions = {}) =>
  Effect.gen(function*() {
    const inbound = yield* Queue.unbounded<CallInput>()
    const line = yield* makeLine(inbound)
    const thresholds: Array<number> = []
    const stt: SttScript = { answers: [], finalizes: [], emit: () => Effect.void }
    const ttsRequests: Array<string> = []
    const engine: EngineScript = { greeting: GREETING, answers: [], asked: [], ...options.engine }
    const call = yield* runCallSession({
      engine: fakeEngine(engine),
      vad: fakeVad(thresholds),
      speechToText: fakeStt(stt),
      textToSpeech: fakeTts(ttsRequests, options.ttsFails ?? (() => false)) as unknown as TextToSpeechShape,
      ...(options.turnModel ? { turnModel: options.turnModel } : {})
    }, {
      runId: 1,
      protocol: testProtocol,
      send: line.send,
      inbound,
      plan: testPlan(options.greetingInterruptible ?? false, options.talkEndpointingMs),
      stt: speech,
      tts: speech,
      hangUp: line.hangUp,
      turnSettings: callTurnSettings(options.configurations ?? null, {
        idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
        maxDurationMs: options.maxDurationMs ?? 600_000,
        language: "en"
      }),
      save: () => Effect.void,
      clipAudio: () => Effect.succeedNone,
      ...(options.transfer ? { transfer: options.transfer(inbound) } : {})
    }).pipe(Effect.fork)

    const frames = (ms: number, level: number, each?: (elapsed: number) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        for (let elapsed = 0; elapsed < ms; elapsed += 20) {
          if (each) yield* each(elapsed)
          yield* Queue.offer(inbound, { _tag: "Audio", pcm: new Int16Array(160).fill(level) })
          yield* TestClock.adjust(20)
        }
      })
    const silence = (ms: number) => frames(ms, 0)
    /**
     * The caller speaks `ms` long; its words are final `lagMs` after the flush (null: never), and
     * with `interims` the words show up as interim results while they speak.
     */
    const say = (
      text: string,
      ms: number,
      options: { readonly lagMs?: number | null; readonly interims?: boolean; readonly level?: number } = {}
    ) =>
      Effect.gen(function*() {
        stt.answers.push({ text, lagMs: options.lagMs === undefined ? 100 : options.lagMs })
        const words = text.split(/\s+/)
        yield* frames(ms, options.level ?? 900, (elapsed) =>
          options.interims && elapsed > 0 && elapsed % 100 === 0
            ? stt.emit({ _tag: "Interim", text: words.slice(0, Math.ceil((elapsed / ms) * words.length)).join(" ") })
            : Effect.void)
      })
    const now = TestClock.currentTimeMillis
    const hangUp = Effect.gen(function*() {
      yield* Queue.offer(inbound, { _tag: "Stopped" })
      yield* TestClock.adjust(100)
      return yield* Fiber.join(call)
    })
    const finish = Effect.gen(function*() {
      yield* TestClock.adjust(100)
      return yield* Fiber.join(call)
    })
    return { call, line, stt, engine, thresholds, ttsRequests, silence, say, frames, now, hangUp, finish }
  })

const conversation = (result: { transcript: ReadonlyArray<{ role: string; text: string; interrupted?: boolean }> }) =>
  result.transcript.map((turn) => [turn.role, turn.text, ...(turn.interrupted ? ["interrupted"] : [])])

describe("a call driven by the turn-taking reducer (TestClock, in-memory services)", () => {
  it.scoped("answers a caller who pauses mid-sentence once, to everything they said", () =>
    Effect.gen(function*() {
      // The first answer is the one prepared for the pause (and dropped); the second is heard.
      const call = yield* startCall({ engine: { answers: [{ text: "Go on." }, { text: "A table for when?" }] } })
      yield* call.silence(2000)
      yield* call.say("I would like", 600)
      yield* call.silence(350)
      yield* call.say("to book a table.", 800)
      yield* call.silence(3000)
      const result = yield* call.hangUp
      expect(conversation(result)).toEqual([
        ["assistant", GREETING],
        ["user", "I would like to book a table."],
        ["assistant", "A table for when?"]
      ])
      // An answer to the first half was prepared during the pause, and never heard.
      expect(call.engine.asked).toEqual(["I would like", "I would like to book a table."])
      expect(call.line.log.clears).toEqual([])
    }))

  it.scoped("goes on with a caller back from a transfer when the end of the stream they left is read after their return", () =>
    Effect.gen(function*() {
      // The carrier's transfer ended the agent's stream and the destination did not answer; the
      // caller is back on a new stream. The old stream's stop was queued just before the return,
      // and a loaded process reads it only once the transfer is over: it is no hang-up.
      const transfers: Array<TransferResult> = []
      const call = yield* startCall({
        engine: {
          answers: [
            { transfer: { kind: "number", number: "+14155550100" }, text: "They are not available." },
            { text: "Goodbye then." }
          ],
          transfers
        },
        transfer: (inbound) => ({
          ask: () => Effect.as(Effect.sleep(1000), { outcome: "no_answer" as const, accepted: true }),
          streamSurvives: false,
          awaitReturn: Effect.as(Queue.offerAll(inbound, [{ _tag: "Stopped" }, { _tag: "Resumed" }]), true),
          leave: Effect.die("the agent left a caller who came back")
        })
      })
      yield* call.silence(2000)
      yield* call.say("Sales, please.", 800)
      yield* call.silence(4000)
      yield* call.say("Thanks anyway.", 800)
      yield* call.silence(3000)
      const result = yield* call.hangUp
      expect(transfers).toEqual([{ outcome: "no_answer", callerStillHere: true }])
      expect(conversation(result)).toEqual([
        ["assistant", GREETING],
        ["user", "Sales, please."],
        ["assistant", "They are not available."],
        ["user", "Thanks anyway."],
        ["assistant", "Goodbye then."]
      ])
      expect(result.ending.reason).toBe("user_hangup")
    }))

  it.scoped("asks the model once when the caller makes a noise after their words: the prepared answer is reused", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ engine: { answers: [{ text: "For how many people?" }] } })
      yield* call.silence(2000)
      // Trailing off ("…and"): the turn waits longer, and the answer is prepared meanwhile.
      yield* call.say("I would like to book a table and", 1000)
      yield* call.silence(700)
      expect(call.engine.asked).toEqual(["I would like to book a table and"])
      // A cough: speech without words drops the prepared answer unheard, then the turn ends.
      yield* call.say("", 200)
      yield* call.silence(3000)
      const result = yield* call.hangUp
      expect(conversation(result).slice(1)).toEqual([
        ["user", "I would like to book a table and"],
        ["assistant", "For how many people?"]
      ])
      expect(call.engine.asked).toEqual(["I would like to book a table and"])
    }))

  it.scoped("waits the endpointing of the node the conversation is at (a node may wait longer)", () =>
    Effect.gen(function*() {
      const call = yield* startCall({
        talkEndpointingMs: 1200,
        engine: { answers: [{ text: "What is your address?" }, { text: "Thanks." }] }
      })
      yield* call.silence(2000)
      yield* call.say("I want a visit.", 800)
      yield* call.silence(700)
      // At the greeting's node: answered after the agent's 500 ms.
      expect(call.engine.asked.at(-1)).toBe("I want a visit.")
      yield* call.silence(2500)
      yield* call.say("Twelve Main Street.", 800)
      const stoppedAt = yield* call.now
      yield* call.silence(3000)
      const result = yield* call.hangUp
      // At "talk" (1200 ms): the prepared answer waited for the node's own silence.
      const answer = result.transcript.at(-1)!
      expect(answer).toMatchObject({ role: "assistant", text: "Thanks." })
      expect(answer.trace!.endpointing_ms).toBe(1200)
      expect(answer.trace!.turn_end_ms - answer.trace!.speech_end_ms).toBeGreaterThanOrEqual(1200)
      expect(answer.trace!.speech_end_ms).toBeLessThanOrEqual(stoppedAt)
      expect(result.transcript[2]!.trace!.endpointing_ms).toBe(500)
    }))

  it.scoped("waits for a transcript that takes 3 s, then answers it (the turn is never dropped)", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ engine: { answers: [{ text: "At nine." }] } })
      yield* call.silence(2000)
      yield* call.say("What time do you open?", 1000, { lagMs: 3000 })
      const stoppedAt = yield* call.now
      yield* call.silence(2900)
      expect(call.engine.asked).toEqual([])
      yield* call.silence(1500)
      expect(call.engine.asked).toEqual(["What time do you open?"])
      yield* call.silence(2000)
      const result = yield* call.hangUp
      expect(conversation(result).slice(1)).toEqual([["user", "What time do you open?"], ["assistant", "At nine."]])
      const answer = result.transcript[2]!
      expect(answer.trace!.transcript_ms! - answer.trace!.speech_end_ms).toBeGreaterThanOrEqual(3000)
      expect(answer.trace!.turn_end_ms).toBeGreaterThanOrEqual(answer.trace!.transcript_ms!)
      expect(answer.trace!.speech_end_ms).toBeLessThanOrEqual(stoppedAt)
      expect(answer.trace!.first_audio_ms).toBeGreaterThan(answer.trace!.first_token_ms!)
      expect(result.ttsCharacters).toBeGreaterThan(0)
    }))

  it.scoped("asks the caller to repeat when no transcript comes within the bound", () =>
    Effect.gen(function*() {
      const call = yield* startCall()
      yield* call.silence(2000)
      yield* call.say("Hello?", 800, { lagMs: null })
      yield* call.silence(8000)
      const result = yield* call.hangUp
      expect(conversation(result)).toEqual([["assistant", GREETING], ["assistant", DEFAULT_FALLBACK_LINE]])
      expect(call.engine.asked).toEqual([])
    }))

  it.scoped("lets a backchannel pass while the agent speaks: no cut, no turn, and the echo guard is on meanwhile", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ engine: { answers: [{ text: LONG }] } })
      yield* call.silence(2000)
      yield* call.say("Tell me about the panels.", 1000)
      yield* call.silence(1500)
      yield* call.say("Uh-huh.", 400, { interims: true })
      yield* call.silence(9000)
      const result = yield* call.hangUp
      expect(call.line.log.clears).toEqual([])
      expect(conversation(result)).toEqual([
        ["assistant", GREETING],
        ["user", "Tell me about the panels."],
        ["assistant", LONG]
      ])
      // Raised while the agent speaks, lowered after: its own echo is not taken for the caller.
      expect(call.thresholds.slice(0, 2)).toEqual([0.75, 0.5])
    }))

  it.scoped("stops the agent for a real interruption, keeps what was heard and answers the caller", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ engine: { answers: [{ text: LONG }, { text: "Sure, go ahead." }] } })
      yield* call.silence(2000)
      yield* call.say("Tell me about the panels.", 1000)
      yield* call.silence(2500)
      const cutIn = yield* call.now
      yield* call.say("Stop, wait a second please.", 1000, { interims: true })
      yield* call.silence(3000)
      const result = yield* call.hangUp
      expect(call.line.log.clears).toHaveLength(1)
      // Stopped at the first interim word (100 ms into the speech), not before: a word is not a cough.
      const stoppedAfter = call.line.log.clears[0]! - cutIn
      expect(stoppedAfter).toBeGreaterThanOrEqual(100)
      expect(stoppedAfter).toBeLessThanOrEqual(200)
      const turns = conversation(result)
      expect(turns.slice(-2)).toEqual([["user", "Stop, wait a second please."], ["assistant", "Sure, go ahead."]])
      const cut = result.transcript.find((turn) => turn.interrupted)!
      expect(LONG.startsWith(cut.text)).toBe(true)
      expect(cut.text.length).toBeGreaterThan(10)
      expect(cut.text.length).toBeLessThan(LONG.length)
      expect(cut.trace!.interrupted_at_ms).toBeGreaterThan(cut.trace!.first_audio_ms!)
    }))

  it.scoped("pauses for a noise over the agent, then resumes the cut sentence when it had no words", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ engine: { answers: [{ text: LONG }] } })
      yield* call.silence(2000)
      yield* call.say("Tell me about the panels.", 1000)
      yield* call.silence(2500)
      yield* call.say("", 500)
      yield* call.silence(12_000)
      const result = yield* call.hangUp
      // Paused once (the carrier's audio cleared), then the reply went on to its end.
      expect(call.line.log.clears).toHaveLength(1)
      expect(conversation(result)).toEqual([
        ["assistant", GREETING],
        ["user", "Tell me about the panels."],
        ["assistant", LONG]
      ])
    }))

  it.scoped("stops and records what was heard when the caller hangs up during a reply", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ engine: { answers: [{ text: LONG }] } })
      yield* call.silence(2000)
      yield* call.say("Tell me about the panels.", 1000)
      yield* call.silence(2000)
      const result = yield* call.hangUp
      expect(result.ending.reason).toBe("user_hangup")
      const cut = result.transcript.at(-1)!
      expect(cut).toMatchObject({ role: "assistant", interrupted: true })
      expect(LONG.startsWith(cut.text)).toBe(true)
      // The caller hung up: the call is not hung up again at the carrier.
      expect(call.line.log.hungUp).toBeNull()
    }))

  it.scoped("ends an idle call even while a background voice (no words) keeps voice detection busy", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ idleTimeoutMs: 5000 })
      yield* call.silence(2000)
      for (let burst = 0; burst < 6; burst++) {
        yield* call.say("", 300)
        yield* call.silence(700)
      }
      const result = yield* call.finish
      expect(result.ending.reason).toBe("idle_timeout")
      expect(call.line.log.hungUp).toBeGreaterThanOrEqual(6000)
      expect(call.line.log.hungUp).toBeLessThanOrEqual(7500)
    }))

  it.scoped("ends at the maximum duration even while the caller keeps talking", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ maxDurationMs: 6000, engine: { answers: [{ text: LONG }, { text: LONG }] } })
      yield* call.silence(1500)
      for (let burst = 0; burst < 8; burst++) {
        yield* call.say("", 400)
        yield* call.silence(400)
      }
      const result = yield* call.finish
      expect(result.ending.reason).toBe("max_duration_exceeded")
      expect(call.line.log.hungUp).toBeGreaterThanOrEqual(6000)
      expect(call.line.log.hungUp).toBeLessThan(6500)
    }))

  it.scoped("lets the caller cut into the greeting when its node allows interruptions", () =>
    Effect.gen(function*() {
      const greeting = `${LONG} ${LONG}`
      const call = yield* startCall({
        greetingInterruptible: true,
        engine: { greeting, answers: [{ text: "It is Acme." }] }
      })
      yield* call.silence(1500)
      yield* call.say("Sorry, who is calling?", 1000, { interims: true })
      yield* call.silence(3000)
      const result = yield* call.hangUp
      expect(call.line.log.clears).toHaveLength(1)
      expect(conversation(result)[0]).toEqual(["assistant", expect.any(String), "interrupted"])
      expect(conversation(result).slice(1)).toEqual([["user", "Sorry, who is calling?"], ["assistant", "It is Acme."]])
    }))

  it.scoped("does not cut a greeting whose node does not allow it, and answers after it", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ engine: { greeting: LONG, answers: [{ text: "It is Acme." }] } })
      yield* call.silence(1500)
      yield* call.say("Sorry, who is calling?", 1000, { interims: true })
      yield* call.silence(8000)
      const result = yield* call.hangUp
      expect(call.line.log.clears).toEqual([])
      expect(conversation(result)).toEqual([
        ["assistant", LONG],
        ["user", "Sorry, who is calling?"],
        ["assistant", "It is Acme."]
      ])
    }))

  it.scoped("retries a failed model answer once, then answers; the failure is recorded", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ engine: { answers: [{ fail: true }, { text: "We open at nine." }] } })
      yield* call.silence(2000)
      yield* call.say("When do you open?", 800)
      yield* call.silence(3000)
      const result = yield* call.hangUp
      expect(call.engine.asked).toEqual(["When do you open?", "When do you open?"])
      expect(conversation(result).slice(1)).toEqual([["user", "When do you open?"], ["assistant", "We open at nine."]])
      expect(result.providerFailures).toEqual([{
        provider: "llm",
        reason: "The model failed",
        at_ms: expect.any(Number)
      }])
      // The retry answers the same turn: its timing is that turn's.
      expect(result.transcript[1]).toMatchObject({ role: "user", start_ms: expect.any(Number) })
      expect(result.transcript[2]!.trace!.turn_end_ms).toBeLessThan(result.transcript[2]!.trace!.first_audio_ms!)
      expect(result.latenciesMs).toHaveLength(1)
      expect(result.ending.reason).toBe("user_hangup")
    }))

  it.scoped("retries a failed answer with the agent's fallback model when it names one", () =>
    Effect.gen(function*() {
      const models: Array<string> = []
      const call = yield* startCall({
        engine: { answers: [{ fail: true }, { text: "We open at nine." }, { text: "Until six." }], models },
        configurations: { turn_taking: { fallback_model: "backup-model" } }
      })
      yield* call.silence(2000)
      yield* call.say("When do you open?", 800)
      yield* call.silence(3000)
      yield* call.say("And when do you close?", 800)
      yield* call.silence(3000)
      const result = yield* call.hangUp
      // Only the retry goes to the fallback; the next turn asks the agent's own model again.
      expect(models).toEqual(["primary-model", "backup-model", "primary-model"])
      expect(conversation(result).slice(1)).toEqual([
        ["user", "When do you open?"],
        ["assistant", "We open at nine."],
        ["user", "And when do you close?"],
        ["assistant", "Until six."]
      ])
      expect(result.providerFailures.map((failure) => failure.provider)).toEqual(["llm"])
    }))

  it.scoped("when speech synthesis fails every time: retry, fallback line, then a polite end", () =>
    Effect.gen(function*() {
      const call = yield* startCall({ ttsFails: () => true })
      yield* call.silence(3000)
      const result = yield* call.finish
      // Each line's first sentence is asked for, and fails.
      const firstSentence = (line: string) => line.slice(0, line.indexOf(".") + 1)
      expect(call.ttsRequests).toEqual([
        GREETING,
        GREETING,
        firstSentence(DEFAULT_FALLBACK_LINE),
        firstSentence(DEFAULT_GOODBYE_LINE)
      ])
      expect(result.providerFailures.map((failure) => failure.provider)).toEqual(["tts", "tts", "tts"])
      expect(result.ending.reason).toBe("speech_error")
      expect(result.ending.error).toContain("3 provider failures")
      expect(call.line.log.hungUp).not.toBeNull()
    }))
})

describe("a call's inbound backlog", () => {
  it.scoped("drops (and counts) only caller audio when the call falls behind, never marks or the hang-up", () =>
    Effect.gen(function*() {
      const backlog = yield* makeInboundBacklog(1, 3)
      const audio: CallInput = { _tag: "Audio", pcm: new Int16Array(160) }
      for (let frame = 0; frame < 5; frame++) yield* backlog.offer(audio)
      yield* backlog.offer({ _tag: "Played", name: "g1:p0:s0" })
      yield* backlog.offer({ _tag: "Stopped" })
      const kept = yield* Queue.takeAll(backlog.queue)
      expect([...kept].map((media) => media._tag)).toEqual(["Audio", "Audio", "Audio", "Played", "Stopped"])
      expect(backlog.dropped()).toBe(2)
    }))
})

describe("a call with an end-of-turn model (TestClock, a scripted model)", () => {
  /** A model answering `verdict` (or failing, with null), keeping the audio it was asked about. */
  const scriptedModel = (verdict: number | null, configured = true) => {
    const asked: Array<Int16Array> = []
    const model: TurnModelShape = {
      configured,
      completeProbability: (pcm) => {
        asked.push(pcm)
        return verdict === null
          ? Effect.fail(new TurnModelFailed({ path: "/models/turn.onnx", message: "it could not be loaded" }))
          : Effect.succeed(verdict)
      }
    }
    return { model, asked }
  }

  const answerTo = (verdict: number | null, words: string, configured = true) =>
    Effect.gen(function*() {
      const { asked, model } = scriptedModel(verdict, configured)
      const call = yield* startCall({ turnModel: model, engine: { answers: [{ text: "Sure." }] } })
      yield* call.silence(2000)
      yield* call.say(words, 1000)
      yield* call.silence(2500)
      const result = yield* call.hangUp
      const answer = result.transcript.at(-1)!
      expect(answer).toMatchObject({ role: "assistant", text: "Sure." })
      return { trace: answer.trace!, asked }
    })

  it.scoped("answers after the ordinary endpointing when the model hears a finished turn, though the words trail off", () =>
    Effect.gen(function*() {
      const { asked, trace } = yield* answerTo(0.9, "I would like to book a table and")
      expect(trace.endpointing_ms).toBe(500)
      expect(trace.turn_end_ms - trace.speech_end_ms).toBeLessThan(600)
      // It was asked once, about the caller's audio: their second of speech (level 900) and the silence before it.
      expect(asked).toHaveLength(1)
      expect(asked[0]!.length).toBeGreaterThanOrEqual(3 * 8000)
      expect(asked[0]!.filter((sample) => sample === 900).length).toBe(8000)
    }))

  it.scoped("waits the longer delay when the model hears an unfinished turn, though the sentence sounds finished", () =>
    Effect.gen(function*() {
      const { trace } = yield* answerTo(0.1, "I'd like to book a table.")
      expect(trace.endpointing_ms).toBe(1200)
      expect(trace.turn_end_ms - trace.speech_end_ms).toBeGreaterThanOrEqual(1200)
    }))

  it.scoped("falls back to the heuristic when the model fails", () =>
    Effect.gen(function*() {
      const failing = yield* answerTo(null, "I would like to book a table and")
      expect(failing.asked).toHaveLength(1)
      expect(failing.trace.endpointing_ms).toBe(1200)
    }))

  it.scoped("never asks a model that is not configured", () =>
    Effect.gen(function*() {
      const unconfigured = yield* answerTo(0.9, "I would like to book a table and", false)
      expect(unconfigured.asked).toHaveLength(0)
      expect(unconfigured.trace.endpointing_ms).toBe(1200)
    }))
})
