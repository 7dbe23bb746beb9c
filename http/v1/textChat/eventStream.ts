import { HttpServerResponse } from "@effect/platform"
import { Effect, Exit, Queue, Scope, Stream } from "effect"
import type { Emit } from "../../../services/ConversationEngine.ts"
import { errorStatus } from "../../errors.ts"

type Event<A, E> =
  | { readonly _tag: "token"; readonly text: string }
  | { readonly _tag: "done"; readonly value: A }
  | { readonly _tag: "failed"; readonly error: E }

const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

const failureFrame = (error: unknown) => {
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""
  const known = tag in errorStatus ? errorStatus[tag as keyof typeof errorStatus] : undefined
  const message = known && error instanceof Error ? error.message : "Internal Server Error"
  return frame("error", { status: known?.status ?? 500, detail: message })
}

/** The client asked for server-sent events. */
export const wantsEventStream = (accept: string | undefined) => (accept ?? "").toLowerCase().includes("text/event-stream")

/**
 * Runs a reply and sends it as server-sent events: `token` events with `{text}` as the words are
 * produced, then one `message` event with the whole result, or an `error` event `{status, detail}`
 * if it fails after the first token. A failure before any token is returned as an ordinary error
 * response (404, 409, 502...), because the status line has not been sent yet. The reply runs in a
 * scope the response stream closes, so a client that goes away interrupts it.
 */
export const eventStreamOf = <A, E>(reply: (emit: Emit) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const events = yield* Queue.unbounded<Event<A, E>>()
    yield* reply((text) => Queue.offer(events, { _tag: "token", text })).pipe(
      Effect.matchEffect({
        onFailure: (error) => Queue.offer(events, { _tag: "failed", error }),
        onSuccess: (value) => Queue.offer(events, { _tag: "done", value })
      }),
      Effect.forkIn(scope)
    )
    const first = yield* Queue.take(events)
    if (first._tag === "failed") {
      yield* Scope.close(scope, Exit.void)
      return yield* Effect.fail(first.error)
    }
    const body = Stream.concat(Stream.make(first), Stream.fromQueue(events)).pipe(
      Stream.takeUntil((event) => event._tag !== "token"),
      Stream.map((event) =>
        event._tag === "token" ? frame("token", { text: event.text }) : event._tag === "done" ? frame("message", event.value) : failureFrame(event.error)
      ),
      Stream.encodeText,
      Stream.ensuring(Scope.close(scope, Exit.void))
    )
    return HttpServerResponse.stream(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })

