import { Effect, Exit, Scope, Stream } from "effect"
import type { SpeechFailed, TranscriptEvent, TranscriptionSession } from "../../services/SpeechToText.ts"

export interface CallTranscription {
  /** The caller's audio; dropped while the session has failed and is not yet restarted. */
  readonly send: (pcm: Int16Array) => Effect.Effect<void>
  /** Asks for everything said so far, now. */
  readonly finalize: Effect.Effect<void>
  /** A new session after a failure (the failed one is closed). */
  readonly restart: Effect.Effect<void>
  /** Seconds of audio sent to every session of the call: what the provider bills. */
  readonly audioSeconds: Effect.Effect<number>
}

/**
 * The call's streaming transcription, one provider session at a time. A session's failure is
 * reported once (not once per audio frame), and the call decides whether to restart it.
 */
export const makeCallTranscription = (options: {
  readonly open: Effect.Effect<TranscriptionSession, SpeechFailed, Scope.Scope>
  readonly onEvent: (event: TranscriptEvent) => Effect.Effect<void>
  readonly onFailure: (failure: SpeechFailed) => Effect.Effect<void>
}): Effect.Effect<CallTranscription, SpeechFailed, Scope.Scope> =>
  Effect.gen(function*() {
    let closedSeconds = 0
    let current: {
      readonly session: TranscriptionSession
      readonly scope: Scope.CloseableScope
      failed: boolean
      /** Its seconds are in `closedSeconds` already. */
      readonly counted: boolean
    }

    const open = Effect.gen(function*() {
      const scope = yield* Scope.make()
      const session = yield* options.open.pipe(
        Scope.extend(scope),
        Effect.tapError(() => Scope.close(scope, Exit.void))
      )
      const entry = { session, scope, failed: false, counted: false }
      yield* session.events.pipe(
        Stream.runForEach(options.onEvent),
        Effect.catchAll((failure) => failed(entry, failure)),
        Effect.forkIn(scope)
      )
      return entry
    })

    const failed = (entry: typeof current, failure: SpeechFailed) =>
      Effect.suspend(() => {
        if (entry.failed) return Effect.void
        entry.failed = true
        return options.onFailure(failure)
      })

    current = yield* open
    yield* Effect.addFinalizer(() => Scope.close(current.scope, Exit.void))

    const guarded = (use: (session: TranscriptionSession) => Effect.Effect<void, SpeechFailed>) =>
      Effect.suspend(() => {
        const entry = current
        return entry.failed ? Effect.void : use(entry.session).pipe(Effect.catchAll((error) => failed(entry, error)))
      })

    return {
      send: (pcm) => guarded((session) => session.send(pcm)),
      finalize: guarded((session) => session.finalize),
      restart: Effect.gen(function*() {
        const old = current
        closedSeconds += yield* old.session.audioSeconds
        yield* Scope.close(old.scope, Exit.void)
        const reopened = yield* Effect.either(open)
        if (reopened._tag === "Right") current = reopened.right
        else {
          current = { ...old, failed: true, counted: true }
          yield* options.onFailure(reopened.left)
        }
      }),
      audioSeconds: Effect.suspend(() =>
        current.counted
          ? Effect.succeed(closedSeconds)
          : Effect.map(current.session.audioSeconds, (seconds) => closedSeconds + seconds)
      )
    } satisfies CallTranscription
  })
