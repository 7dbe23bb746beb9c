import { HttpServerResponse } from "@effect/platform"
import { Deferred, Effect, Exit, Queue, Scope, Stream } from "effect"
import type { Emit } from "../../../services/ConversationEngine.ts"
import { errorStatus } from "../../errors.ts"

/** An encoded SSE frame; `last` ends the response. */
interface Frame {
  readonly bytes: Uint8Array
  readonly last: boolean
}

const encoder = new TextEncoder()

const frame = (event: string, data: unknown, last = false): Frame => ({
  bytes: encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
  last
})

const failureFrame = (error: unknown) => {
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""
  const known = tag in errorStatus ? errorStatus[tag as keyof typeof errorStatus] : undefined
  const message = known && error instanceof Error ? error.message : "Internal Server Error"
  return frame("error", { status: known?.status ?? 500, detail: message }, true)
}

/** The client asked for server-sent events. */
export const wantsEventStream = (accept: string | undefined) =>
  (accept ?? "").toLowerCase().includes("text/event-stream")

/**
 * Runs a reply and sends it as server-sent events: `token` events with `{text}` as the words are
 * produced, then one `message` event with the whole result, or an `error` event `{status, detail}`
 * if it fails after the first token. A failure before any token is returned as an ordinary error
 * response (404, 409, 502...), because the status line has not been sent yet. The reply runs in a
 * scope the response stream closes, so a client that goes away interrupts it.
 *
 * Frames are encoded as they are produced and queued whole: every stage a token passes through on
 * its way to the socket costs CPU per token, so the response stream is the queue and nothing more.
 */
export const eventStreamOf = <A, E>(reply: (emit: Emit) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const frames = yield* Queue.unbounded<Frame>()
    // Settled by the first frame, or failed by a failure that comes before any.
    const opened = yield* Deferred.make<void, E>()
    const send = (next: Frame) => Queue.offer(frames, next).pipe(Effect.zipRight(Deferred.succeed(opened, undefined)))
    yield* reply((text) => send(frame("token", { text }))).pipe(
      Effect.matchEffect({
        onFailure: (error) =>
          Deferred.fail(opened, error).pipe(
            Effect.flatMap((beforeAnyFrame) => (beforeAnyFrame ? Effect.void : send(failureFrame(error))))
          ),
        onSuccess: (value) => send(frame("message", value, true))
      }),
      Effect.forkIn(scope)
    )
    yield* Deferred.await(opened).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
    const body = Stream.fromQueue(frames).pipe(
      Stream.takeUntil((sent) => sent.last),
      Stream.map((sent) => sent.bytes),
      Stream.ensuring(Scope.close(scope, Exit.void))
    )
    return HttpServerResponse.stream(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
