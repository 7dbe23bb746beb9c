import { Effect, Option, Queue, Stream, Take } from "effect"
import type { SpeechFailed, TranscriptEvent } from "../../../services/SpeechToText.ts"

/**
 * Transcript events from a provider's callbacks to the session's one consumer. Bounded: a
 * consumer that stops reading is a bug, and the session fails rather than buffering without end.
 */
const MAX_UNREAD_EVENTS = 1024

interface TranscriptChannel {
  /** Offers an event; false once the channel is closed. */
  readonly emit: (event: TranscriptEvent) => boolean
  /** Ends the events with a failure; the first ending wins. */
  readonly fail: (error: SpeechFailed) => void
  /** Ends the events normally. */
  readonly end: () => void
  /** The failure that ended the channel, if one did. */
  readonly failure: () => SpeechFailed | undefined
  readonly events: Stream.Stream<TranscriptEvent, SpeechFailed>
}

export const transcriptChannel = (overflow: () => SpeechFailed) =>
  Effect.gen(function*() {
    const queue = yield* Effect.acquireRelease(
      Queue.unbounded<Take.Take<TranscriptEvent, SpeechFailed>>(),
      Queue.shutdown
    )
    let ended = false
    let failure: SpeechFailed | undefined
    const close = (take: Take.Take<TranscriptEvent, SpeechFailed>) => {
      if (ended) return
      ended = true
      queue.unsafeOffer(take)
    }
    const fail = (error: SpeechFailed) => {
      if (ended) return
      failure = error
      close(Take.fail(error))
    }
    const emit = (event: TranscriptEvent) => {
      if (ended) return false
      if (Option.getOrElse(queue.unsafeSize(), () => 0) >= MAX_UNREAD_EVENTS) {
        fail(overflow())
        return false
      }
      return queue.unsafeOffer(Take.of(event))
    }
    return {
      emit,
      fail,
      end: () => close(Take.end),
      failure: () => failure,
      events: Stream.fromQueue(queue).pipe(Stream.flattenTake)
    } satisfies TranscriptChannel
  })
