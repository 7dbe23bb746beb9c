import type { Socket } from "@effect/platform"
import { Effect, Queue } from "effect"
import type { MediaLine } from "../../services/VoiceCalls.ts"

/** A message from the server's end of a memory line: media protocol text or audio, or the close. */
export type ServerMessage = string | Uint8Array | Socket.CloseEvent

export interface MemoryMediaLine {
  /** The end the call is served on. */
  readonly line: MediaLine
  /** What the call sent, in order. */
  readonly fromServer: Queue.Dequeue<ServerMessage>
  /** Sends to the call, as a media stream's peer would. */
  readonly send: (message: string | Uint8Array) => Effect.Effect<void>
  /** Hangs up from the peer's side: the call sees its socket close. */
  readonly close: Effect.Effect<void>
}

/**
 * Both ends of a media connection inside one process: an agent test's simulated caller holds one
 * end, the call is served on the other exactly as on a browser's WebSocket, so the call path is
 * the real one without a network hop.
 */
export const makeMemoryMediaLine: Effect.Effect<MemoryMediaLine> = Effect.gen(function*() {
  const toServer = yield* Queue.unbounded<string | Uint8Array | null>()
  const fromServer = yield* Queue.unbounded<ServerMessage>()

  const runRaw = <_, E = never, R = never>(
    handler: (message: string | Uint8Array) => Effect.Effect<_, E, R> | void
  ): Effect.Effect<void, E, R> =>
    Effect.gen(function*() {
      while (true) {
        const message = yield* Queue.take(toServer)
        if (message === null) return
        const handled = handler(message)
        if (Effect.isEffect(handled)) yield* handled
      }
    })

  const line: MediaLine = {
    runRaw,
    writer: Effect.succeed((chunk: ServerMessage) => Queue.offer(fromServer, chunk).pipe(Effect.asVoid))
  }
  return {
    line,
    fromServer,
    send: (message) => Queue.offer(toServer, message).pipe(Effect.asVoid),
    close: Queue.offer(toServer, null).pipe(Effect.asVoid)
  }
})
