import { Clock, Effect, type Option, Queue, type Scope } from "effect"
import type {
  ConversationEngineShape,
  ConversationPlan,
  TransferOutcome,
  TransferResult
} from "../../services/ConversationEngine.ts"
import type { SpeechConnection } from "../../services/ModelSettings.ts"
import type { SpeechFailed, SpeechToTextShape, TranscriptEvent } from "../../services/SpeechToText.ts"
import type { TextToSpeechShape } from "../../services/TextToSpeech.ts"
import type { TurnModelShape } from "../../services/TurnModel.ts"
import type { VoiceActivityShape } from "../../services/VoiceActivity.ts"
import { dtmfTones } from "../../src/audio/dtmfTones.ts"
import { type ConversationState, initialState, type ToolCallTaken } from "../../src/conversation/conversationState.ts"
import type { Ending } from "../../src/conversation/endReason.ts"
import { noUsage, type TokenUsage, type TranscriptTurn } from "../../src/conversation/transcript.ts"
import type { InboundMedia, MediaProtocol, OutboundMedia } from "../../src/telephony/media/mediaProtocol.ts"
import type { TransferEndpoint } from "../../src/tools/transferDestination.ts"
import { machineWatch, type MachineWatchEvent } from "../../src/voice/answeringMachine.ts"
import { type CallRecorder, callRecorder } from "../../src/voice/callRecorder.ts"
import { echoGate } from "../../src/voice/echoGate.ts"
import { recentAudio } from "../../src/voice/recentAudio.ts"
import { SMART_TURN_SECONDS } from "../../src/voice/smartTurnInput.ts"
import type { CallTurnSettings } from "../../src/voice/turnTaking/mod.ts"
import { utteranceGate } from "../../src/voice/utteranceGate.ts"
import { makeCallConversation } from "./callConversation.ts"
import { makeCallTranscription } from "./callTranscription.ts"
import { makePlayout } from "./playout.ts"
import { type CallEvent, type ProviderFailure, runTurnInterpreter } from "./turnInterpreter.ts"
import { awaitAnswer, type VoicemailCall } from "./voicemailAnswer.ts"

/** Voice detection reports speech this long (the reducer decides what it means: a cough does not interrupt). */
const MIN_SPEECH_MS = 64
/**
 * Silence that ends a stretch of speech: the transcript is flushed then, and the reducer's
 * endpointing (counted from the start of this silence) decides whether the turn has ended.
 */
const SPEECH_END_SILENCE_MS = 200
/** Voice detection's threshold, and the higher one while the agent speaks (its echo is quieter than a caller). */
const SPEECH_THRESHOLD = 0.5
const ECHO_GUARD_THRESHOLD = 0.75

/** Audio before an utterance's onset that still goes to speech-to-text (a soft first consonant). */
const STT_PRE_ROLL_MS = 150
/**
 * Silence after the last word that still goes to speech-to-text: voice detection reports a pause
 * this long, and the rest of the silence is sent only if the caller goes on.
 */
const STT_TAIL_MS = 100

/**
 * What the call's media connection delivers, in order. `Resumed`: the caller is back on a new
 * stream after a transfer that was not answered; anything of an earlier stream comes before it.
 */
export type CallInput = InboundMedia | { readonly _tag: "Closed" } | { readonly _tag: "Resumed" }

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
  /** Endpointing, barge-in, fallback lines, idle and maximum duration: from the agent and the run's limits. */
  readonly turnSettings: CallTurnSettings
  /** Stores the conversation after each turn (a live run can be read while the call goes on). */
  readonly save: (state: ConversationState, transcript: ReadonlyArray<TranscriptTurn>) => Effect.Effect<void>
  /** A recorded clip's audio when `text` is the text of a clip this run plays (greetings, transition speech). */
  readonly clipAudio: (text: string) => Effect.Effect<Option.Option<Int16Array>>
  /** An outbound call whose agent detects answering machines itself; absent: no detection. */
  readonly voicemail?: VoicemailCall
  /** A carrier's call: hands it to another party (cold or warm transfer) and tells how the destination answered. */
  readonly transfer?: {
    /**
     * `whisper`: a warm transfer, the destination hears it before it is joined with the caller (who
     * stays with the agent meanwhile); null: cold. `accepted`: the carrier took the request (a
     * refused one leaves the call as it was).
     */
    readonly ask: (
      endpoint: TransferEndpoint,
      timeoutSeconds: number,
      whisper: string | null
    ) => Effect.Effect<{ readonly outcome: TransferOutcome; readonly accepted: boolean }>
    /** Whether the agent's media stream goes on while the destination rings (else the transfer ends it). */
    readonly streamSurvives: boolean
    /** Closes the media connection without ending the call: the caller now talks to the destination. */
    readonly leave: Effect.Effect<void>
    /** After a transfer that was not answered and took the stream: true once the caller is back on a new one. */
    readonly awaitReturn: Effect.Effect<boolean>
  }
}

/** The agent's last words are heard before a transfer takes the caller away, within this bound. */
const WORDS_BEFORE_TRANSFER_MS = 10_000

export interface CallResult {
  readonly ending: Ending
  readonly state: ConversationState
  readonly transcript: ReadonlyArray<TranscriptTurn>
  readonly usage: TokenUsage
  readonly ttsCharacters: number
  readonly sttSeconds: number
  readonly latenciesMs: ReadonlyArray<number>
  /** Provider failures the call survived (or ended on): provider, reason and when. */
  readonly providerFailures: ReadonlyArray<ProviderFailure>
  readonly recorder: CallRecorder
}

export interface CallServices {
  readonly engine: ConversationEngineShape
  readonly vad: VoiceActivityShape
  readonly speechToText: SpeechToTextShape
  readonly textToSpeech: TextToSpeechShape
  /** The end-of-turn model; absent or not configured: the heuristic endpointing alone. */
  readonly turnModel?: TurnModelShape
}

/** A provider's failure in detail (refused, status, network error), for the operator only. */
const logSpeechFailure = (runId: number, failure: SpeechFailed) =>
  Effect.logWarning("A speech provider failed during a call").pipe(
    Effect.annotateLogs({ run_id: runId, provider: failure.provider, reason: failure.reason, error: failure.message })
  )

/**
 * One voice call, from the first media frame to the ending. The caller's audio feeds voice
 * activity detection and streaming STT, whose events (dated on the audio's own clock) go to the
 * turn interpreter; it decides every turn through the turn-taking reducer and speaks the replies.
 * All time is the `Clock`'s.
 */
export const runCallSession = (
  services: CallServices,
  input: CallSessionInput
): Effect.Effect<CallResult, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { plan, protocol } = input
    const rate = protocol.sampleRate
    const startedAt = yield* Clock.currentTimeMillis
    const recorder = callRecorder(rate)
    const echo = echoGate()
    const mailbox = yield* Queue.unbounded<CallEvent>()
    const offer = (event: CallEvent) => Queue.offer(mailbox, event).pipe(Effect.asVoid)
    const sinceAudio = (atMs: number) => Effect.map(Clock.currentTimeMillis, (now) => now - (receivedAudioMs - atMs))
    let receivedAudioMs = 0
    let echoFrames = 0
    let ttsCharacters = 0
    const voicemail = input.voicemail ?? null
    const watch = voicemail === null
      ? null
      : machineWatch(rate, { leaveMessage: voicemail.policy.action === "leave_message" })
    const watchEvents = yield* Queue.unbounded<MachineWatchEvent | { readonly _tag: "HungUp" }>()
    const toWatch = (events: ReadonlyArray<MachineWatchEvent>) => Queue.offerAll(watchEvents, events)

    const playout = yield* makePlayout({
      protocol,
      send: input.send,
      streamStartedAt: startedAt,
      onFrame: (pcm, atMs) => {
        recorder.agent(pcm, atMs)
        echo.agent(pcm, atMs)
      }
    })
    const detector = yield* services.vad.detector(rate, {
      threshold: SPEECH_THRESHOLD,
      minSpeechMs: MIN_SPEECH_MS,
      minSilenceMs: SPEECH_END_SILENCE_MS,
      pauseMs: STT_TAIL_MS
    })

    const onTranscript = (event: TranscriptEvent) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => {
        switch (event._tag) {
          case "Interim":
            return offer({ _tag: "TranscriptInterim", at, text: event.text })
          case "Final":
            if (watch !== null && event.text.trim() !== "") {
              return Effect.zipRight(
                toWatch(watch.transcript(event.text)),
                offer({ _tag: "TranscriptFinal", at, text: event.text, settled: event.speechFinal })
              )
            }
            // A speech-final piece answers the flush (or the provider's own end of utterance):
            // everything said before the caller stopped is in.
            return offer({ _tag: "TranscriptFinal", at, text: event.text, settled: event.speechFinal })
          case "UtteranceEnd":
            return Effect.void
        }
      })
    const transcription = yield* makeCallTranscription({
      open: services.speechToText.open(input.stt, {
        sampleRate: rate,
        tag: `talkgraph-run-${input.runId}`,
        endpointingMs: input.turnSettings.turnTaking.endpointingMs
      }),
      onEvent: onTranscript,
      onFailure: (failure) =>
        Effect.zipRight(
          logSpeechFailure(input.runId, failure),
          Effect.flatMap(
            Clock.currentTimeMillis,
            (at) => offer({ _tag: "TranscriptionFailed", at, reason: `${failure.provider}: ${failure.reason}` })
          )
        )
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
        providerFailures: [{
          provider: "stt",
          reason: `${transcription.left.provider}: ${transcription.left.reason}`,
          at_ms: 0
        }],
        recorder
      } satisfies CallResult
    }
    const stt = transcription.right

    /**
     * Where a transfer stands: asked and not yet answered, the agent gone, the stream ended while
     * it was asked, and how many returns of the caller the media reader has yet to reach (the end
     * of a stream queued before its caller's return is that stream's, not a hang-up).
     */
    const transfer = { pending: false, leftCall: false, streamEnded: false, returnsAhead: 0 }
    const transferCall = (
      endpoint: TransferEndpoint,
      options: { readonly timeoutSeconds: number; readonly whisper?: string }
    ): Effect.Effect<TransferResult> =>
      Effect.gen(function*() {
        const carrier = input.transfer!
        const warm = options.whisper !== undefined
        // What the agent is saying is heard before the carrier takes the call elsewhere.
        yield* playout.quiet.pipe(Effect.timeout(WORDS_BEFORE_TRANSFER_MS), Effect.ignore)
        transfer.pending = true
        transfer.streamEnded = false
        let returned = false
        const { accepted, outcome } = yield* Effect.gen(function*() {
          const asked = yield* carrier.ask(endpoint, options.timeoutSeconds, options.whisper ?? null)
          // The transfer took the agent's stream; the carrier may connect the caller back on a new one.
          if (asked.outcome !== "answered" && asked.accepted && !carrier.streamSurvives && !warm) {
            returned = yield* carrier.awaitReturn
            if (returned) transfer.returnsAhead++
          }
          return asked
        }).pipe(Effect.ensuring(Effect.sync(() => (transfer.pending = false))))
        // A warm transfer rings the destination on a call of its own: the caller's stream stays with the agent.
        const callerStillHere = outcome !== "answered" &&
          (returned || (!transfer.streamEnded && (warm || carrier.streamSurvives || !accepted)))
        // Answered, or the transfer took the stream (it ends, if it has not yet) and the caller did
        // not come back: the call is no longer this session's to hang up.
        if (!callerStillHere && (outcome === "answered" || transfer.streamEnded || accepted)) transfer.leftCall = true
        yield* Effect.logInfo("Call transfer", { run_id: input.runId, outcome, caller_still_here: callerStillHere })
        return { outcome, callerStillHere }
      })

    const turnModel = services.turnModel?.configured ? services.turnModel : null
    /** What voice detection heard lately (the agent's echo held back), for the end-of-turn model. */
    const heardLately = turnModel === null ? null : recentAudio(rate, SMART_TURN_SECONDS)
    const predictTurnEnd = turnModel === null || heardLately === null ? null : () => {
      const audio = heardLately.snapshot()
      return turnModel.completeProbability(audio, rate).pipe(
        Effect.catchAll((failure) =>
          Effect.as(
            Effect.logDebug("No end-of-turn prediction; the heuristic decides this pause").pipe(
              Effect.annotateLogs({ run_id: input.runId, error: failure.message })
            ),
            null
          )
        )
      )
    }

    const sttGate = utteranceGate(rate, { preRollMs: STT_PRE_ROLL_MS })
    const onMedia = (media: CallInput): Effect.Effect<void> => {
      switch (media._tag) {
        case "Audio":
          return Effect.gen(function*() {
            recorder.caller(media.pcm)
            const frames = echo.line(media.pcm, receivedAudioMs)
            receivedAudioMs += (media.pcm.length * 1000) / rate
            for (const frame of frames) {
              // The agent's own voice coming back is not the caller: neither voice detection nor
              // speech-to-text hears it (the recording keeps the line as it was).
              const heard = frame.echo ? new Int16Array(frame.pcm.length) : frame.pcm
              if (frame.echo) echoFrames++
              heardLately?.push(heard)
              const events = yield* detector.push(heard)
              for (const pcm of sttGate.push(heard, events)) yield* stt.send(pcm)
              for (const event of events) {
                if (event._tag === "SpeechStarted") {
                  watch?.speechStarted(event.atMs)
                  yield* offer({ _tag: "CallerSpeechStarted", at: yield* sinceAudio(event.atMs) })
                } else if (event._tag === "SpeechEnded") {
                  watch?.speechStopped(event.atMs)
                  yield* offer({ _tag: "CallerSpeechStopped", at: yield* sinceAudio(event.atMs) })
                }
              }
              if (watch !== null) yield* toWatch(watch.audio(heard))
            }
          })
        case "Played":
          return playout.played(media.name)
        case "Dtmf":
          return Effect.flatMap(Clock.currentTimeMillis, (at) => offer({ _tag: "KeyPressed", at, key: media.digit }))
        case "Resumed":
          transfer.returnsAhead--
          return Effect.void
        case "Stopped":
        case "Closed":
          // The stream a returned caller left: its end was read late, on a loaded process.
          if (transfer.returnsAhead > 0) return Effect.void
          // A transfer ends the agent's stream on most carriers: the caller did not hang up.
          if (transfer.pending || transfer.leftCall) {
            transfer.streamEnded = true
            return Effect.void
          }
          return Effect.flatMap(Clock.currentTimeMillis, (at) => offer({ _tag: "CallerHungUp", at })).pipe(
            Effect.zipRight(Queue.offer(watchEvents, { _tag: "HungUp" }))
          )
        default:
          return Effect.void
      }
    }
    yield* Queue.take(input.inbound).pipe(Effect.flatMap(onMedia), Effect.forever, Effect.forkScoped)

    const transcript: Array<TranscriptTurn> = []
    /** The one place a turn joins the call's transcript (each reply's turns, as it is heard or cut short). */
    const appendTurn = (turn: TranscriptTurn) => {
      transcript.push(turn)
    }
    const conversation = makeCallConversation({
      initial: initialState(plan.graph.nodes.find((node) => node.type === "startCall")!.id),
      startedAt,
      transcript,
      appendTurn
    })
    /** What the other end has not been told yet (the browser page follows the conversation; carriers do not). */
    let toldTurns = 0
    let untoldToolCalls: Array<ToolCallTaken> = []
    const tellProgress = Effect.suspend(() => {
      if (!protocol.progress) return Effect.void
      const update = {
        turns: transcript.slice(toldTurns),
        toolCalls: untoldToolCalls,
        nodeId: conversation.state().node_id
      }
      toldTurns = transcript.length
      untoldToolCalls = []
      return input.send(protocol.progress(update))
    })
    yield* tellProgress
    if (voicemail !== null) {
      const answered = yield* awaitAnswer({
        call: voicemail,
        runId: input.runId,
        events: watchEvents,
        mailbox,
        playout,
        synthesize: (text) => services.textToSpeech.synthesize(input.tts, text, rate),
        countCharacters: (count) => {
          ttsCharacters += count
        },
        hangUp: input.hangUp,
        nodeId: conversation.state().node_id,
        appendTurn
      })
      if (answered === "voicemail") {
        return {
          ending: { reason: "voicemail", error: null },
          state: conversation.state(),
          transcript,
          usage: noUsage,
          ttsCharacters,
          sttSeconds: yield* stt.audioSeconds,
          latenciesMs: [],
          providerFailures: [],
          recorder
        } satisfies CallResult
      }
    }
    const result = yield* runTurnInterpreter({
      mailbox,
      conversation: {
        ...conversation,
        record: (reply) => {
          if (reply.outcome !== null) untoldToolCalls.push(...reply.outcome.toolCalls)
          return conversation.record(reply)
        }
      },
      engine: services.engine,
      plan: {
        ...plan,
        // The keys follow the audio queued so far; words spoken after the tool answers are heard after them.
        callActions: {
          sendDigits: (digits) => playout.play(dtmfTones(digits, rate)),
          ...(input.transfer ? { transfer: transferCall } : {})
        }
      },
      playout,
      speaker: {
        playout,
        sampleRate: rate,
        synthesize: (text) => services.textToSpeech.synthesize(input.tts, text, rate),
        clipAudio: input.clipAudio,
        countCharacters: (count) => {
          ttsCharacters += count
        }
      },
      transcription: stt,
      predictTurnEnd,
      echoGuard: (on) => detector.configure({ threshold: on ? ECHO_GUARD_THRESHOLD : SPEECH_THRESHOLD }),
      // After a transfer the call is the destination's (or already over): the agent only leaves it.
      hangUp: Effect.suspend(() => transfer.leftCall && input.transfer ? input.transfer.leave : input.hangUp),
      save: (state, turns) => Effect.zipRight(input.save(state, turns), tellProgress),
      settings: input.turnSettings,
      // Deepgram is asked to punctuate; OpenAI's own transcription always does. An endpoint of the
      // organization's own may not, so there the call learns it from the first transcript.
      transcriptionPunctuates: input.stt.provider === "deepgram" ||
        (input.stt.provider === "openai" && input.stt.baseUrl === null),
      startedAt,
      runId: input.runId
    })
    const loss = protocol.inboundLoss?.()
    if (loss !== undefined && (loss.gaps > 0 || loss.lateFrames > 0)) {
      yield* Effect.logWarning("Caller audio arrived with gaps or late; gaps were filled with silence").pipe(
        Effect.annotateLogs({
          run_id: input.runId,
          gaps: loss.gaps,
          concealed_ms: loss.concealedMs,
          late_frames: loss.lateFrames,
          reorder_window_frames: loss.reorderWindow
        })
      )
    }
    if (echoFrames > 0) {
      yield* Effect.logInfo("The agent's own voice came back on the caller's line and was held back").pipe(
        Effect.annotateLogs({ run_id: input.runId, echo_frames: echoFrames })
      )
    }
    return {
      ending: result.ending,
      state: conversation.state(),
      transcript,
      usage: conversation.usage(),
      ttsCharacters,
      sttSeconds: yield* stt.audioSeconds,
      latenciesMs: result.latenciesMs,
      providerFailures: result.failures,
      recorder
    } satisfies CallResult
  })
