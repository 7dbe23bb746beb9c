import { Cause, Clock, Deferred, Effect, Exit, Fiber, Option, Queue, Scope, Stream } from "effect"
import type { Emit, EmitOptions } from "../../services/ConversationEngine.ts"
import type { SpeechFailed } from "../../services/SpeechToText.ts"
import type { TurnOutcome } from "../../src/conversation/conversationState.ts"
import { isFailure } from "../../src/conversation/endReason.ts"
import { sentenceChunker } from "../../src/voice/sentenceChunker.ts"
import { heardPart, type SpokenSentence } from "./heardText.ts"
import type { Playout } from "./playout.ts"

/**
 * A sentence is synthesized once the audio still to play is this short: long enough to cover a
 * TTS provider's first byte, short enough that a caller cutting in leaves little synthesized (and
 * paid for) unheard.
 */
const TTS_LOOKAHEAD_MS = 2000

/** What a reply tells the call's control loop; `at` is the `Clock`'s. */
export type ReplyReport =
  | { readonly _tag: "AudioStarted"; readonly generation: number; readonly at: number; readonly interruptible: boolean }
  | { readonly _tag: "Completed"; readonly generation: number; readonly at: number }
  | {
    readonly _tag: "Failed"
    readonly generation: number
    readonly at: number
    readonly provider: "llm" | "tts"
    readonly reason: string
    readonly heard: boolean
  }

export interface SpeakerServices {
  readonly playout: Playout
  readonly sampleRate: number
  readonly synthesize: (text: string) => Stream.Stream<Int16Array, SpeechFailed>
  /** A recorded clip's audio when `text` is the text of a clip this run plays. */
  readonly clipAudio: (text: string) => Effect.Effect<Option.Option<Int16Array>>
  /** Characters sent to TTS (what the provider bills). */
  readonly countCharacters: (count: number) => void
  /** Whether the caller may cut in while the agent speaks from this node (null: the node the reply began at). */
  readonly interruptible: (nodeId: string | null) => boolean
  readonly report: (report: ReplyReport) => Effect.Effect<void>
}

/** The words of a reply: an engine step (its outcome is the conversation's next state), or a fixed line. */
export type ReplyStep = (emit: Emit) => Effect.Effect<TurnOutcome | null>

/** One reply being spoken, as the control loop drives it. */
export interface SpokenReply {
  readonly generation: number
  /** A held reply becomes audible. */
  readonly release: Effect.Effect<void>
  /** Stops the audio where it is (the carrier's buffer cleared); `resume` goes on from the start of the cut sentence. */
  readonly pause: Effect.Effect<void>
  readonly resume: Effect.Effect<void>
  /** Cancels the model and speech; `clear` drops its audio at the carrier too. */
  readonly stop: (clear: boolean) => Effect.Effect<void>
  /** What the caller has heard of it so far. */
  readonly heard: Effect.Effect<string>
  readonly audible: () => boolean
  readonly outcome: () => TurnOutcome | null
  readonly firstTokenAt: () => number | null
  readonly firstAudioAt: () => number | null
}

/**
 * Speaks one reply: the step's words are chunked into sentences as they stream, each sentence is
 * synthesized (or is a recorded clip) in order, and a feeder hands the audio to the playout
 * followed by a mark per sentence, so what was heard is known sentence by sentence. A held reply
 * is prepared (model and speech run) but fed nothing until released. Its fibers live in a scope
 * of their own, closed by `stop`.
 */
export const speakReply = (
  services: SpeakerServices,
  generation: number,
  held: boolean,
  step: ReplyStep
): Effect.Effect<SpokenReply> =>
  Effect.gen(function*() {
    const { playout, report } = services
    const scope = yield* Scope.make()
    const lock = yield* Effect.makeSemaphore(1)
    const wake = yield* Queue.sliding<void>(1)
    const pieces = yield* Queue.unbounded<number | null>()
    const sentences: Array<SpokenSentence & { chunks: Array<Int16Array>; fed: number; done: boolean }> = []
    const chunker = sentenceChunker()
    let released = !held
    let paused = false
    let audible = false
    let outcome: TurnOutcome | null = null
    let spoken = false
    let completed = false
    let stopped = false
    let interruptible = false
    /** Increased by each pause: marks of an earlier playback are stale. */
    let playback = 0
    let cursor = 0
    let firstTokenAt: number | null = null
    let firstAudioAt: number | null = null
    /** What had been heard when the audio was paused (the cut sentence is replayed whole on resume). */
    let heardAtPause: string | null = null
    const nudge = Queue.offer(wake, undefined).pipe(Effect.asVoid)

    const completeIfDone = Effect.suspend(() => {
      if (completed || stopped || !spoken || !released || !sentences.every((sentence) => sentence.heard)) {
        return Effect.void
      }
      completed = true
      return Effect.flatMap(Clock.currentTimeMillis, (at) => report({ _tag: "Completed", generation, at }))
    })

    const fail = (provider: "llm" | "tts", reason: string) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (at) => stopped ? Effect.void : report({ _tag: "Failed", generation, at, provider, reason, heard: audible })
      )

    const watch = (index: number, mark: Effect.Effect<boolean>, ofPlayback: number) =>
      mark.pipe(
        Effect.flatMap((played) =>
          played && ofPlayback === playback
            ? Effect.zipRight(Effect.sync(() => (sentences[index]!.heard = true)), completeIfDone)
            : Effect.void
        ),
        Effect.forkIn(scope)
      )

    /** One step of feeding: a chunk of audio, or the mark after a finished sentence. False: nothing to do now. */
    const feedOne = lock.withPermits(1)(Effect.gen(function*() {
      if (!released || paused || stopped) return false
      const sentence = sentences[cursor]
      if (sentence === undefined) return false
      if (sentence.fed === 0 && sentence.startAt === null) {
        sentence.startAt = (yield* playout.playedMs) + (yield* playout.aheadMs)
      }
      if (sentence.fed < sentence.chunks.length) {
        const pcm = sentence.chunks[sentence.fed++]!
        if (!audible) {
          audible = true
          const at = yield* Clock.currentTimeMillis
          firstAudioAt = at
          interruptible = services.interruptible(outcome?.state.node_id ?? null)
          yield* report({ _tag: "AudioStarted", generation, at, interruptible })
        }
        yield* playout.play(pcm)
        return true
      }
      if (!sentence.done) return false
      const mark = yield* playout.mark(`g${generation}:p${playback}:s${cursor}`)
      yield* watch(cursor, Deferred.await(mark), playback)
      cursor++
      return true
    }))
    yield* feedOne.pipe(
      Effect.flatMap((fed) => fed ? Effect.void : Queue.take(wake)),
      Effect.forever,
      Effect.forkIn(scope)
    )

    /** Unheard audio ahead of the caller: queued at the playout, or synthesized and not fed yet. */
    const aheadMs = Effect.map(playout.aheadMs, (queued) =>
      queued + sentences.slice(cursor).reduce(
        (sum, sentence) =>
          sum +
          sentence.chunks.slice(sentence.fed).reduce((ms, pcm) => ms + (pcm.length * 1000) / services.sampleRate, 0),
        0
      ))
    const untilTtsRoom: Effect.Effect<void> = Effect.flatMap(aheadMs, (ahead) =>
      ahead <= TTS_LOOKAHEAD_MS ? Effect.void : Effect.zipRight(Effect.sleep(ahead - TTS_LOOKAHEAD_MS), untilTtsRoom))

    const synthesizeNext: Effect.Effect<boolean, SpeechFailed> = Effect.gen(function*() {
      const index = yield* Queue.take(pieces)
      if (index === null) {
        return false
      }
      const sentence = sentences[index]!
      const append = (pcm: Int16Array) =>
        Effect.zipRight(
          Effect.sync(() => {
            sentence.chunks.push(pcm)
            sentence.ms += (pcm.length * 1000) / services.sampleRate
          }),
          nudge
        )
      const clip = yield* services.clipAudio(sentence.text)
      if (Option.isSome(clip)) {
        yield* append(clip.value)
      } else {
        yield* untilTtsRoom
        services.countCharacters(sentence.text.length)
        yield* services.synthesize(sentence.text).pipe(Stream.runForEach(append))
      }
      sentence.done = true
      yield* nudge
      return true
    })
    const synthesis = yield* synthesizeNext.pipe(
      Effect.repeat({
        while: (more) =>
          more
      }),
      Effect.forkIn(scope)
    )

    const queueSentences = (texts: ReadonlyArray<string>) =>
      Queue.offerAll(
        pieces,
        texts.filter((text) =>
          text.trim() !== ""
        ).map((text) =>
          sentences.push({ text, ms: 0, startAt: null, heard: false, chunks: [], fed: 0, done: false }) - 1
        )
      )

    const emit = (text: string, options?: EmitOptions) =>
      Effect.gen(function*() {
        if (firstTokenAt === null) firstTokenAt = yield* Clock.currentTimeMillis
        const clip = yield* services.clipAudio(text)
        yield* queueSentences(
          Option.isSome(clip) || options?.whole ? [...chunker.flush(), text] : chunker.push(text)
        )
      })

    yield* Effect.gen(function*() {
      const result = yield* step(emit)
      if (result?.ending && isFailure(result.ending.reason)) {
        return yield* fail("llm", result.ending.error ?? result.ending.reason)
      }
      outcome = result
      yield* queueSentences(chunker.flush())
      yield* Queue.offer(pieces, null)
      const exit = yield* Fiber.await(synthesis)
      if (Exit.isFailure(exit)) {
        const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
        return yield* fail("tts", failure ? `${failure.provider}: ${failure.reason}` : "speech synthesis stopped")
      }
      // The node may have changed during the step: the caller may cut in only where that node allows.
      const nowInterruptible = services.interruptible(outcome?.state.node_id ?? null)
      if (audible && nowInterruptible !== interruptible) {
        interruptible = nowInterruptible
        yield* report({
          _tag: "AudioStarted",
          generation,
          at: yield* Clock.currentTimeMillis,
          interruptible
        })
      }
      spoken = true
      yield* completeIfDone
    }).pipe(Effect.forkIn(scope))

    const release = lock.withPermits(1)(Effect.suspend(() => {
      released = true
      return Effect.zipRight(nudge, completeIfDone)
    }))

    const pause = lock.withPermits(1)(Effect.gen(function*() {
      if (paused) return
      paused = true
      playback++
      heardAtPause = heardPart(sentences, yield* playout.playedMs)
      if (audible) yield* playout.clear
      const resumeAt = sentences.findIndex((sentence) => !sentence.heard)
      if (resumeAt === -1) return
      for (const sentence of sentences.slice(resumeAt)) {
        sentence.fed = 0
        sentence.startAt = null
      }
      cursor = Math.min(cursor, resumeAt)
    }))

    const resume = lock.withPermits(1)(Effect.suspend(() => {
      paused = false
      heardAtPause = null
      return nudge
    }))

    const stop = (clear: boolean) =>
      Effect.gen(function*() {
        stopped = true
        if (clear && audible && !paused) yield* playout.clear
        yield* Scope.close(scope, Exit.void)
      })

    const heard = Effect.map(playout.playedMs, (playedMs) => heardAtPause ?? heardPart(sentences, playedMs))

    return {
      generation,
      release,
      pause,
      resume,
      stop,
      heard,
      audible: () => audible,
      outcome: () => outcome,
      firstTokenAt: () => firstTokenAt,
      firstAudioAt: () => firstAudioAt
    } satisfies SpokenReply
  })
