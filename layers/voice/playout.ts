import { Clock, Deferred, Effect, Fiber, Queue, type Scope } from "effect"
import type { MediaProtocol, OutboundMedia } from "../../src/telephony/media/mediaProtocol.ts"

const FRAME_MS = 20
/**
 * How far ahead of real time audio is sent, at most. Enough to ride out event-loop hiccups without
 * a gap, small enough that a barge-in `clear` drops little and "what was heard" stays accurate.
 */
const LEAD_MS = 250
/**
 * The lead may fall this far before it is topped up: three frames a wake rather than one, a third
 * of the timers and sends per call while the agent speaks, and still 190 ms ahead at the lowest.
 */
const REFILL_MS = 60
/** A marker the carrier never echoes is taken as played this long after its audio should have ended. */
const MARK_GRACE_MS = 1500

type Item = { readonly kind: "audio"; readonly pcm: Int16Array } | {
  readonly kind: "mark"
  readonly name: string
  readonly played: Deferred.Deferred<boolean>
}

export interface Playout {
  readonly play: (pcm: Int16Array) => Effect.Effect<void>
  /**
   * A marker after the audio queued so far. The deferred completes with `true` once that audio has
   * played, `false` when a clear dropped it first (carriers echo cleared marks too: those echoes
   * arrive after the clear and are ignored).
   */
  readonly mark: (name: string) => Effect.Effect<Deferred.Deferred<boolean>>
  /** Drops everything not yet played, here and at the carrier. */
  readonly clear: Effect.Effect<void>
  /** The carrier echoed a marker. */
  readonly played: (name: string) => Effect.Effect<void>
  /** Audio is queued, or sent and still playing at the carrier. */
  readonly speaking: Effect.Effect<boolean>
  /** Completes once everything queued and sent has played (polled: marks may never come back). */
  readonly quiet: Effect.Effect<void>
  /** Milliseconds of agent audio played so far over the call (sent, minus what is still ahead of real time). */
  readonly playedMs: Effect.Effect<number>
  /** Milliseconds of agent audio not heard yet: queued here, or sent and still ahead of real time. */
  readonly aheadMs: Effect.Effect<number>
}

export interface PlayoutOptions {
  readonly protocol: MediaProtocol
  readonly send: (messages: ReadonlyArray<OutboundMedia>) => Effect.Effect<void>
  /** Every frame as it is sent, with its play time in ms since the stream started (for the recording). */
  readonly onFrame: (pcm: Int16Array, atMs: number) => void
  /** The call's `Clock` time its audio started: the recording's origin. */
  readonly streamStartedAt: number
}

/**
 * Paces agent audio to the carrier in 20 ms frames against an absolute deadline on the `Clock`
 * (fixed sleeps drift and starve the carrier's buffer), a little ahead of real time.
 */
export const makePlayout = (options: PlayoutOptions): Effect.Effect<Playout, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { protocol, send } = options
    const frameSamples = (protocol.sampleRate * FRAME_MS) / 1000
    const items: Array<Item> = []
    const pending = new Map<string, { readonly played: Deferred.Deferred<boolean>; readonly due: number }>()
    const wake = yield* Queue.sliding<void>(1)
    let partial: Int16Array | null = null
    /** Samples queued here (whole items and the partial one), not sent yet. */
    let queuedSamples = 0
    /** Clock time the audio sent so far finishes playing. */
    let audibleUntil = 0
    let sentMs = 0

    const nextFrame = (): Int16Array | null => {
      const frame = new Int16Array(frameSamples)
      let filled = 0
      while (filled < frameSamples) {
        const source = partial ?? (items[0]?.kind === "audio" ? (items.shift() as { pcm: Int16Array }).pcm : null)
        if (source === null) break
        const count = Math.min(frameSamples - filled, source.length)
        frame.set(source.subarray(0, count), filled)
        filled += count
        partial = count < source.length ? source.subarray(count) : null
      }
      if (filled === 0) return null
      queuedSamples -= filled
      return frame
    }

    const settleOverdueMarks = (now: number) =>
      Effect.forEach(
        [...pending],
        ([name, mark]) =>
          now >= mark.due
            ? Effect.sync(() => pending.delete(name)).pipe(Effect.zipRight(Deferred.succeed(mark.played, true)))
            : Effect.void,
        { discard: true }
      )

    const pump = Effect.gen(function*() {
      while (true) {
        const now = yield* Clock.currentTimeMillis
        yield* settleOverdueMarks(now)
        if (items.length === 0 && partial === null) {
          yield* Queue.take(wake).pipe(Effect.timeout(pending.size > 0 ? "250 millis" : "1 second"), Effect.ignore)
          continue
        }
        if (audibleUntil < now) audibleUntil = now
        const out: Array<OutboundMedia> = []
        while (audibleUntil < now + LEAD_MS && (items.length > 0 || partial !== null)) {
          const head = partial === null ? items[0] : undefined
          if (head?.kind === "mark") {
            items.shift()
            pending.set(head.name, { played: head.played, due: audibleUntil + MARK_GRACE_MS })
            out.push(...protocol.mark(head.name))
            continue
          }
          const frame = nextFrame()
          if (frame === null) break
          options.onFrame(frame, audibleUntil - options.streamStartedAt)
          out.push(...protocol.audio(frame))
          audibleUntil += FRAME_MS
          sentMs += FRAME_MS
        }
        if (out.length > 0) yield* send(out)
        const after = yield* Clock.currentTimeMillis
        yield* Effect.sleep(Math.max(1, audibleUntil - LEAD_MS + REFILL_MS - after))
      }
    })
    const fiber = yield* Effect.forkScoped(pump)
    yield* Effect.addFinalizer(() => Fiber.interrupt(fiber))

    const play = (pcm: Int16Array) =>
      Effect.suspend(() => {
        items.push({ kind: "audio", pcm })
        queuedSamples += pcm.length
        return Queue.offer(wake, undefined)
      }).pipe(Effect.asVoid)

    const mark = (name: string) =>
      Effect.gen(function*() {
        const played = yield* Deferred.make<boolean>()
        items.push({ kind: "mark", name, played })
        yield* Queue.offer(wake, undefined)
        return played
      })

    const clear = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      // What was sent but not yet played is dropped at the carrier: it was never heard.
      sentMs -= Math.max(0, audibleUntil - now)
      const queuedMarks = items.flatMap((item) => (item.kind === "mark" ? [item.played] : []))
      items.length = 0
      partial = null
      queuedSamples = 0
      audibleUntil = 0
      const sentMarks = [...pending.values()].map((mark) => mark.played)
      pending.clear()
      yield* send(protocol.clear())
      yield* Effect.forEach([...queuedMarks, ...sentMarks], (played) => Deferred.succeed(played, false), {
        discard: true
      })
    })

    const played = (name: string) =>
      Effect.suspend(() => {
        const mark = pending.get(name)
        if (!mark) return Effect.void
        pending.delete(name)
        return Deferred.succeed(mark.played, true).pipe(Effect.asVoid)
      })

    const speaking = Effect.map(
      Clock.currentTimeMillis,
      (now) => items.length > 0 || partial !== null || audibleUntil > now
    )
    const playedMs = Effect.map(Clock.currentTimeMillis, (now) => sentMs - Math.max(0, audibleUntil - now))
    const aheadMs = Effect.map(
      Clock.currentTimeMillis,
      (now) => (queuedSamples * 1000) / protocol.sampleRate + Math.max(0, audibleUntil - now)
    )

    const quiet = speaking.pipe(
      Effect.delay("50 millis"),
      Effect.repeat({ while: (still) => still }),
      Effect.asVoid
    )

    return { play, mark, clear, played, speaking, quiet, playedMs, aheadMs }
  })
