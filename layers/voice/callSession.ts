import { Deferred, Effect, Fiber, Option, Queue, type Scope, Stream } from "effect"
import type { ConversationEngineShape, ConversationPlan } from "../../services/ConversationEngine.ts"
import type { SpeechConnection } from "../../services/ModelSettings.ts"
import type { SpeechFailed, SpeechToTextShape } from "../../services/SpeechToText.ts"
import type { TextToSpeechShape } from "../../services/TextToSpeech.ts"
import type { VoiceActivityShape } from "../../services/VoiceActivity.ts"
import type { ConversationState, ToolCallTaken, TurnOutcome } from "../../src/conversation/conversationState.ts"
import type { Ending } from "../../src/conversation/endReason.ts"
import { addUsage, noUsage, type TokenUsage, type TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { InboundMedia, MediaProtocol, OutboundMedia } from "../../src/telephony/media/mediaProtocol.ts"
import { type CallRecorder, callRecorder } from "../../src/voice/callRecorder.ts"
import { sentenceChunker } from "../../src/voice/sentenceChunker.ts"
import { makePlayout, type Playout } from "./playout.ts"

/** After the caller stops, how long to wait for the transcript of what they said before answering without it. */
const FINAL_TRANSCRIPT_WAIT_MS = 1200
/** Speech this long is an utterance; the agent's own echo and clicks are shorter. */
const MIN_SPEECH_MS = 64
/** Silence that ends the caller's turn (the end-of-turn decision's main input). */
export const END_OF_TURN_SILENCE_MS = 500
/**
 * Silence after which the turn may be ending: the transcript is flushed and the answer prepared
 * (model and TTS) while the rest of the end-of-turn silence runs, its audio held back until the
 * turn has surely ended. Longer than the gaps between words, well short of the end of a turn.
 */
const PAUSE_MS = 200
const TICK_MS = 100
/**
 * A sentence is synthesized once the audio still to play is this short: long enough to cover a
 * TTS provider's first byte, short enough that a caller cutting in leaves little synthesized (and
 * paid for) unheard.
 */
const TTS_LOOKAHEAD_MS = 2000

export type CallInput = InboundMedia | { readonly _tag: "Closed" }

export interface CallSessionInput {
  readonly runId: number
  readonly protocol: MediaProtocol
  readonly send: (messages: ReadonlyArray<OutboundMedia>) => Effect.Effect<void>
  readonly inbound: Queue.Dequeue<CallInput>
  readonly plan: ConversationPlan
  readonly stt: SpeechConnection
  readonly tts: SpeechConnection
  /** Ends the call at the carrier (or closes the browser's socket). */
  readonly hangUp: Effect.Effect<void>
  readonly idleTimeoutMs: number
  readonly maxDurationMs: number
  /** Stores the conversation after each turn (a live run can be read while the call goes on). */
  readonly save: (state: ConversationState, transcript: ReadonlyArray<TranscriptTurn>) => Effect.Effect<void>
  /** A recorded clip's audio when `text` is the text of a clip this run plays (greetings, transition speech). */
  readonly clipAudio: (text: string) => Effect.Effect<Option.Option<Int16Array>>
}

export interface CallResult {
  readonly ending: Ending
  readonly state: ConversationState
  readonly transcript: ReadonlyArray<TranscriptTurn>
  readonly usage: TokenUsage
  readonly ttsCharacters: number
  readonly sttSeconds: number
  readonly latenciesMs: ReadonlyArray<number>
  readonly recorder: CallRecorder
}

interface Speech {
  /** Each piece spoken, with the length of its audio; `played` once the carrier confirmed it. */
  readonly sentences: Array<{ readonly text: string; ms: number; played: boolean }>
  /** The call's played-audio clock when this reply began: what it has played is measured from here. */
  readonly startedAtPlayedMs: number
  /** Audio is done being produced (the reply and all its speech are queued). */
  done: boolean
}

/**
 * What the caller heard of a reply cut short: whole pieces that played, then the share of the
 * piece playing at the cut, in words (speech runs at a roughly even pace through a sentence).
 */
const playedPart = (speech: Speech, playedMs: number): string => {
  const heard: Array<string> = []
  let elapsed = 0
  for (const sentence of speech.sentences) {
    if (sentence.played || elapsed + sentence.ms <= playedMs) heard.push(sentence.text)
    else {
      const words = sentence.text.split(/\s+/)
      const share = Math.floor((words.length * Math.max(0, playedMs - elapsed)) / Math.max(1, sentence.ms))
      if (share > 0) heard.push(words.slice(0, share).join(" "))
      break
    }
    elapsed += sentence.ms
  }
  return heard.join(" ")
}

type Control =
  | { readonly _tag: "SpeechStarted" }
  | { readonly _tag: "SpeechEnded"; readonly atWall: number }
  | { readonly _tag: "SpeechPaused" }
  | { readonly _tag: "SpeechResumed" }
  | { readonly _tag: "Final"; readonly text: string }
  | { readonly _tag: "ReplyDone"; readonly generation: number; readonly outcome: TurnOutcome }
  | { readonly _tag: "SpeechFailed"; readonly error: SpeechFailed }
  | { readonly _tag: "HungUp" }
  | { readonly _tag: "Tick" }

interface Services {
  readonly engine: ConversationEngineShape
  readonly vad: VoiceActivityShape
  readonly speechToText: SpeechToTextShape
  readonly textToSpeech: TextToSpeechShape
}

/**
 * One voice call, from the first media frame to the ending: the caller's audio feeds voice
 * activity detection and streaming STT; a finished turn goes to the conversation engine, whose
 * words are chunked into sentences, spoken by TTS and paced out to the carrier. One control
 * fiber makes every decision (turn ends, barge-in, idle, hang-up) from a queue of events, so
 * no two decisions race.
 */
/** A provider's failure in detail (refused, status, network error), for the operator only: the run says which provider failed. */
const logSpeechFailure = (runId: number, failure: SpeechFailed) =>
  Effect.logWarning("A speech provider failed during a call").pipe(
    Effect.annotateLogs({ run_id: runId, provider: failure.provider, reason: failure.reason, error: failure.message })
  )

export const runCallSession = (
  services: Services,
  input: CallSessionInput
): Effect.Effect<CallResult, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { engine } = services
    const { plan, protocol } = input
    const rate = protocol.sampleRate
    const streamStartedAt = Date.now()
    const recorder = callRecorder(rate)
    const control = yield* Queue.unbounded<Control>()
    const offer = (event: Control) => Queue.offer(control, event).pipe(Effect.asVoid)

    let generation = 0
    let awaitingFirstAudio: { readonly generation: number; readonly since: number } | null = null
    const latencies: Array<number> = []
    const latencyByGeneration = new Map<number, number>()

    const playout: Playout = yield* makePlayout({
      protocol,
      send: input.send,
      streamStartedAt,
      onFrame: (pcm, atMs) => recorder.agent(pcm, atMs),
      onFirstFrame: (at) => {
        if (awaitingFirstAudio?.generation !== generation) return
        const latency = at - awaitingFirstAudio.since
        latencies.push(latency)
        latencyByGeneration.set(generation, latency)
        awaitingFirstAudio = null
      }
    })

    const detector = yield* services.vad.detector(rate, {
      minSpeechMs: MIN_SPEECH_MS,
      minSilenceMs: END_OF_TURN_SILENCE_MS,
      pauseMs: PAUSE_MS
    })
    const transcription = yield* services.speechToText.open(input.stt, {
      sampleRate: rate,
      tag: `talkgraph-run-${input.runId}`,
      endpointingMs: END_OF_TURN_SILENCE_MS
    }).pipe(Effect.either)
    if (transcription._tag === "Left") {
      yield* logSpeechFailure(input.runId, transcription.left)
      yield* input.hangUp
      return {
        ending: {
          reason: "speech_error",
          error: `Speech-to-text (${transcription.left.provider}) could not start; the server log has the details.`
        },
        state: { node_id: "", user_turns: 0, extracted: {} },
        transcript: [],
        usage: noUsage,
        ttsCharacters: 0,
        sttSeconds: 0,
        latenciesMs: [],
        recorder
      } satisfies CallResult
    }
    const stt = transcription.right
    let receivedAudioMs = 0

    yield* stt.events.pipe(
      Stream.runForEach((event) => (event._tag === "Final" && event.text.trim()
        ? offer({ _tag: "Final", text: event.text.trim() })
        : Effect.void)
      ),
      Effect.catchAll((error) => offer({ _tag: "SpeechFailed", error })),
      Effect.forkScoped
    )

    const onMedia = (media: CallInput): Effect.Effect<void> => {
      switch (media._tag) {
        case "Audio":
          return Effect.gen(function*() {
            recorder.caller(media.pcm)
            receivedAudioMs += (media.pcm.length * 1000) / rate
            yield* stt.send(media.pcm).pipe(Effect.catchAll((error) => offer({ _tag: "SpeechFailed", error })))
            for (const event of yield* detector.push(media.pcm)) {
              if (event._tag === "SpeechEnded") {
                yield* offer({ _tag: "SpeechEnded", atWall: Date.now() - (receivedAudioMs - event.atMs) })
              } else yield* offer({ _tag: event._tag })
            }
          })
        case "Played":
          return playout.played(media.name)
        case "Stopped":
        case "Closed":
          return offer({ _tag: "HungUp" })
        default:
          return Effect.void
      }
    }
    yield* Queue.take(input.inbound).pipe(Effect.flatMap(onMedia), Effect.forever, Effect.forkScoped)
    yield* offer({ _tag: "Tick" }).pipe(Effect.delay(`${TICK_MS} millis`), Effect.forever, Effect.forkScoped)

    // What the conversation has become; only the control loop (and replies it starts) change these.
    let state: ConversationState = {
      node_id: plan.graph.nodes.find((node) => node.type === "startCall")!.id,
      user_turns: 0,
      extracted: {}
    }
    const transcript: Array<TranscriptTurn> = []
    let usage = noUsage
    let ttsCharacters = 0
    /** What the other end has not been told yet (the browser page follows the conversation; carriers do not). */
    let toldTurns = 0
    let untoldToolCalls: Array<ToolCallTaken> = []
    const tellProgress = Effect.suspend(() => {
      if (!protocol.progress) return Effect.void
      const update = { turns: transcript.slice(toldTurns), toolCalls: untoldToolCalls, nodeId: state.node_id }
      toldTurns = transcript.length
      untoldToolCalls = []
      return input.send(protocol.progress(update))
    })
    yield* tellProgress

    const msSinceStart = (wall: number) => Math.max(0, Math.round(wall - streamStartedAt))

    /** Waits, when the reply is far ahead of the caller, until less than the look-ahead is left to play. */
    const untilTtsRoom: Effect.Effect<void> = Effect.suspend(() => {
      const excess = playout.aheadMs() - TTS_LOOKAHEAD_MS
      return excess <= 0 ? Effect.void : Effect.zipRight(Effect.sleep(excess), untilTtsRoom)
    })

    /** Speaks one piece: a recorded clip when the piece is a clip's text, else TTS; then a marker to learn when it was heard. */
    const speakPiece = (speech: Speech, text: string, name: string, mine: number, heardFrom: Deferred.Deferred<void>) =>
      Effect.gen(function*() {
        // A reply cut off by the caller may still be winding down: none of its audio is played.
        const entry = { text, ms: 0, played: false }
        speech.sentences.push(entry)
        const play = (pcm: Int16Array) =>
          Effect.zipRight(
            Deferred.await(heardFrom),
            Effect.suspend(() =>
              mine === generation
                ? Effect.zipRight(Effect.sync(() => (entry.ms += (pcm.length * 1000) / rate)), playout.play(pcm))
                : Effect.void
            )
          )
        const clip = yield* input.clipAudio(text)
        if (Option.isSome(clip)) yield* play(clip.value)
        else {
          yield* untilTtsRoom
          ttsCharacters += text.length
          yield* services.textToSpeech.synthesize(input.tts, text, rate).pipe(Stream.runForEach(play))
        }
        yield* Deferred.await(heardFrom)
        const played = yield* playout.mark(name)
        yield* Deferred.await(played).pipe(
          Effect.tap(() => Effect.sync(() => (entry.played = true))),
          Effect.forkScoped
        )
      })

    /**
     * One engine step with its speech. Text streams in, sentences go to TTS in order as they
     * complete, and the step's outcome is reported as soon as the model is done; the audio may
     * still be playing. Interrupting it stops the model, TTS and queued audio alike.
     */
    const startReply = (
      step: (emit: (text: string) => Effect.Effect<void>) => Effect.Effect<TurnOutcome>,
      speechEndedAt: number | null,
      held = false
    ) =>
      Effect.gen(function*() {
        generation++
        const mine = generation
        awaitingFirstAudio = speechEndedAt === null ? null : { generation: mine, since: speechEndedAt }
        /** Completed when the reply may be heard: at once, or for a held reply once the turn has ended. */
        const heardFrom = yield* Deferred.make<void>()
        if (!held) yield* Deferred.succeed(heardFrom, undefined)
        const speech: Speech = { sentences: [], startedAtPlayedMs: playout.playedMs(), done: false }
        const pieces = yield* Queue.unbounded<string | null>()
        const chunker = sentenceChunker()
        let index = 0
        const speaker = yield* Queue.take(pieces).pipe(
          Effect.flatMap((piece) => (piece === null
            ? Effect.succeed(true)
            : speakPiece(speech, piece, `g${mine}:s${index++}`, mine, heardFrom).pipe(Effect.as(false)))
          ),
          Effect.repeat({ until: (finished) => finished }),
          Effect.fork
        )
        const emit = (text: string) =>
          Effect.flatMap(
            input.clipAudio(text),
            (clip) => Queue.offerAll(pieces, Option.isSome(clip) ? [...chunker.flush(), text] : chunker.push(text))
          ).pipe(Effect.asVoid)
        // The outcome is reported as soon as the model is done (the conversation has moved on even
        // if the caller cuts in now); the audio is finished being queued afterwards.
        const reply = yield* Effect.gen(function*() {
          const outcome = yield* step(emit)
          yield* offer({ _tag: "ReplyDone", generation: mine, outcome })
          yield* Queue.offerAll(pieces, [...chunker.flush(), null])
          yield* Fiber.join(speaker)
          speech.done = true
        }).pipe(
          Effect.catchAll((error) => offer({ _tag: "SpeechFailed", error })),
          Effect.onInterrupt(() => Fiber.interrupt(speaker)),
          Effect.forkScoped
        )
        return {
          generation: mine,
          fiber: reply,
          speech,
          outcome: null as TurnOutcome | null,
          userText: "",
          heardFrom,
          held
        }
      })

    /** The agent's step in progress: its model step, then its audio playing. */
    let reply: Effect.Effect.Success<ReturnType<typeof startReply>> | null = null
    /** What the caller said since the agent last answered. */
    let heardText = ""
    let carriedText = ""
    let userSpeaking = false
    /** The caller has been silent a while inside their turn (a reported pause). */
    let paused = false
    let turnEndedAt: number | null = null
    let lastActivity = Date.now()
    let ending: Ending | null = null

    /** Whether the caller may cut in: up to the node the agent is speaking from (a reply may have moved on). */
    const currentNodeAllowsInterrupt = () => {
      const nodeId = reply?.outcome?.state.node_id ?? state.node_id
      const node = plan.graph.nodes.find((candidate) => candidate.id === nodeId)
      return node?.type === "agentNode" && node.data.allow_interrupt === true
    }

    /** Appends a finished step's turns, the agent's timed and (when cut short) reduced to what was played. */
    const record = (
      outcome: TurnOutcome,
      replyGeneration: number,
      speech: Speech,
      userTurnAt: { start: number; end: number } | null,
      interrupted: boolean,
      playedMs = 0
    ) => {
      state = outcome.state
      usage = addUsage(usage, outcome.usage)
      untoldToolCalls.push(...outcome.toolCalls)
      const latency = latencyByGeneration.get(replyGeneration)
      let agentLines = outcome.turns.filter((turn) => turn.role === "assistant")
      if (interrupted) {
        const heard = playedPart(speech, playedMs - speech.startedAtPlayedMs)
        agentLines = heard ? [{ ...agentLines[0]!, text: heard, interrupted: true }] : []
      }
      for (const turn of outcome.turns) {
        if (turn.role === "user") {
          transcript.push(userTurnAt ? { ...turn, start_ms: userTurnAt.start, end_ms: userTurnAt.end } : turn)
        }
      }
      agentLines.forEach((turn, position) =>
        transcript.push({
          ...turn,
          ...(position === 0 && latency !== undefined ? { latency_ms: Math.round(latency) } : {}),
          ...(interrupted ? { interrupted: true } : {})
        })
      )
    }

    let userTurn: { start: number; end: number } | null = null
    let speechStartedAt = 0

    const bargeIn = Effect.gen(function*() {
      const active = reply!
      reply = null
      generation++
      const playedMs = playout.playedMs()
      yield* playout.clear
      yield* Fiber.interruptFork(active.fiber)
      if (active.outcome !== null) {
        record(active.outcome, active.generation, active.speech, userTurn, true, playedMs)
        // Talking over a goodbye does not undo it: the conversation has ended.
        if (active.outcome.ending) ending = active.outcome.ending
        yield* tellProgress
        yield* input.save(state, transcript)
      } else if (active.userText) {
        // The model had not answered yet: what the caller said is answered together with what they add.
        carriedText = active.userText
      }
      awaitingFirstAudio = null
    })

    /** A reply whose model step is done and whose audio has all played becomes part of the transcript. */
    const recordIfPlayed = (now: number) =>
      Effect.gen(function*() {
        if (reply === null || reply.held || reply.outcome === null || !reply.speech.done || playout.speaking()) return
        const finished = reply
        const outcome = finished.outcome!
        reply = null
        record(outcome, finished.generation, finished.speech, userTurn, false)
        lastActivity = now
        yield* tellProgress
        yield* input.save(state, transcript)
        if (outcome.ending) ending = outcome.ending
      })

    const spokenSoFar = () => [carriedText, heardText].filter(Boolean).join(" ")

    /** Drops a held reply nobody has heard: the caller went on speaking, or said more. */
    const dropHeld = Effect.suspend(() => {
      if (reply === null || !reply.held) return Effect.void
      const held = reply
      reply = null
      generation++
      if (held.outcome !== null) {
        // Its tokens were spent even though nobody heard it (an answer cut off mid-stream reports none).
        usage = addUsage(usage, held.outcome.usage)
        answered = {
          text: held.userText,
          transcriptLength: transcript.length,
          outcome: { ...held.outcome, usage: noUsage }
        }
      }
      return Fiber.interruptFork(held.fiber)
    })

    /**
     * The model's answer to a dropped held reply. A caller who went on without saying more words
     * (a breath, a noise) gets it again: the same question has the same answer, and asking the model
     * twice would cost the tokens and the time again.
     */
    let answered: { readonly text: string; readonly transcriptLength: number; readonly outcome: TurnOutcome } | null =
      null

    /** The engine's step answering `text` now, or the earlier answer to the same words. */
    const answerTo = (text: string) => {
      const earlier = answered !== null && answered.text === text && answered.transcriptLength === transcript.length
        ? answered.outcome
        : null
      answered = null
      if (earlier) {
        return (emit: (text: string) => Effect.Effect<void>) =>
          Effect.as(
            Effect.forEach(earlier.turns.filter((turn) => turn.role === "assistant"), (turn) => emit(turn.text), {
              discard: true
            }),
            earlier
          )
      }
      const history = [...transcript]
      const current = state
      return (emit: (text: string) => Effect.Effect<void>) => engine.respond(plan, current, history, text, emit)
    }

    /**
     * Prepares the answer to what the caller said up to their pause, held back until their turn
     * has ended. The model and TTS work while the end-of-turn silence runs; if the caller goes
     * on, it is dropped unheard.
     */
    const prepare = Effect.gen(function*() {
      yield* dropHeld
      const text = spokenSoFar()
      reply = yield* startReply(answerTo(text), null, true)
      reply.userText = text
    })

    /** The turn ended as prepared for: the held reply is heard from now. */
    const release = (endedAt: number) =>
      Effect.gen(function*() {
        const prepared = reply!
        prepared.held = false
        heardText = ""
        carriedText = ""
        turnEndedAt = null
        userTurn = { start: msSinceStart(speechStartedAt), end: msSinceStart(endedAt) }
        awaitingFirstAudio = { generation: prepared.generation, since: endedAt }
        yield* Deferred.succeed(prepared.heardFrom, undefined)
        yield* recordIfPlayed(Date.now())
      })

    const respondTo = (text: string, endedAt: number) =>
      Effect.gen(function*() {
        userTurn = { start: msSinceStart(speechStartedAt), end: msSinceStart(endedAt) }
        reply = yield* startReply(answerTo(text), endedAt)
        reply.userText = text
      })

    const handle = (event: Control): Effect.Effect<void, never, Scope.Scope> =>
      Effect.gen(function*() {
        const now = Date.now()
        switch (event._tag) {
          case "SpeechStarted": {
            userSpeaking = true
            paused = false
            speechStartedAt = now - MIN_SPEECH_MS
            lastActivity = now
            turnEndedAt = null
            if (reply !== null && (playout.speaking() || reply.outcome === null) && currentNodeAllowsInterrupt()) {
              yield* bargeIn
            }
            return
          }
          case "SpeechPaused": {
            paused = true
            // Flushed now, the transcript of what was said is in before the turn has surely ended.
            yield* stt.finalize.pipe(Effect.catchAll((error) => offer({ _tag: "SpeechFailed", error })))
            // What was transcribed before the caller went on may be all they said.
            if (heardText && reply === null && ending === null) yield* prepare
            return
          }
          case "SpeechResumed": {
            paused = false
            yield* dropHeld
            return
          }
          case "SpeechEnded": {
            userSpeaking = false
            paused = false
            lastActivity = now
            turnEndedAt = event.atWall
            if (reply?.held) {
              if (reply.userText === spokenSoFar() && ending === null) yield* release(event.atWall)
              else yield* dropHeld
            }
            yield* stt.finalize.pipe(Effect.catchAll((error) => offer({ _tag: "SpeechFailed", error })))
            break
          }
          case "Final": {
            heardText = heardText ? `${heardText} ${event.text}` : event.text
            lastActivity = now
            if (paused && userSpeaking && ending === null && (reply === null || reply.held)) yield* prepare
            break
          }
          case "ReplyDone": {
            if (reply === null || reply.generation !== event.generation) return
            reply.outcome = event.outcome
            // Still playing: the Tick that finds the audio finished records the turn.
            yield* recordIfPlayed(now)
            break
          }
          case "SpeechFailed": {
            yield* logSpeechFailure(input.runId, event.error)
            ending = {
              reason: "speech_error",
              error: `A speech provider (${event.error.provider}) failed; the server log has the details.`
            }
            return
          }
          case "HungUp": {
            ending = { reason: "user_hangup", error: null }
            return
          }
          case "Tick": {
            yield* recordIfPlayed(now)
            if (now - streamStartedAt >= input.maxDurationMs) ending = { reason: "max_duration_exceeded", error: null }
            else if (reply === null && !userSpeaking && now - lastActivity >= input.idleTimeoutMs) {
              ending = { reason: "idle_timeout", error: null }
            }
            break
          }
        }
        // The end of the caller's turn: they stopped, and what they said has been transcribed (or we waited long enough).
        if (reply === null && !userSpeaking && turnEndedAt !== null && ending === null) {
          const waited = now - turnEndedAt >= FINAL_TRANSCRIPT_WAIT_MS
          if (heardText || (waited && carriedText)) {
            const text = [carriedText, heardText].filter(Boolean).join(" ")
            const endedAt = turnEndedAt
            heardText = ""
            carriedText = ""
            turnEndedAt = null
            yield* respondTo(text, endedAt)
          } else if (waited) {
            turnEndedAt = null
          }
        }
      })

    // The opening: the greeting, or the model's first words.
    reply = yield* startReply((emit) => engine.open(plan, emit), null)
    while (ending === null) yield* Queue.take(control).pipe(Effect.flatMap(handle))
    const finalEnding: Ending = ending

    yield* dropHeld
    if (reply !== null) {
      const active = reply
      reply = null
      yield* Fiber.interrupt(active.fiber)
      if (active.outcome !== null) {
        record(
          active.outcome,
          active.generation,
          active.speech,
          userTurn,
          finalEnding.reason === "user_hangup",
          playout.playedMs()
        )
        yield* tellProgress
      }
    }
    if (finalEnding.reason !== "user_hangup") {
      // The agent's last words are heard before the line drops.
      yield* Effect.sleep("50 millis").pipe(
        Effect.repeat({ while: () => playout.speaking() }),
        Effect.timeout("10 seconds"),
        Effect.ignore
      )
      yield* input.hangUp
    }
    const sttSeconds = yield* stt.audioSeconds
    return {
      ending: finalEnding,
      state,
      transcript,
      usage,
      ttsCharacters,
      sttSeconds,
      latenciesMs: latencies,
      recorder
    } satisfies CallResult
  })
