import type { HttpClientError, HttpClientResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import type * as http from "node:http"

/** A provider's reply grew past what is ever read of such a reply. */
export class ReplyTooLarge extends Error {
  readonly limit: number
  constructor(limit: number) {
    super(`the reply exceeded ${limit} bytes`)
    this.limit = limit
  }
}

/** The connection ended before the reply did. */
export class ReplyBrokenOff extends Error {}

/**
 * Bounds on what is read of each kind of reply. A body past its bound is cut off (the connection
 * closed) and the request fails: a provider, or anything a base URL points at, could otherwise
 * fill the process's memory (a 400 MB "carrier" reply once took it to 1.9 GB).
 */
export const REPLY_LIMITS = {
  /** A carrier's JSON answer to placing, hanging up or asking about a call. */
  carrierJson: 1024 * 1024,
  /** A transcription's JSON (one utterance of at most a minute). */
  transcriptionJson: 1024 * 1024,
  /** A whole (unstreamed) chat completion, with or without structured output. */
  chatCompletionJson: 4 * 1024 * 1024,
  /** A streamed chat completion, all events together, and each event by itself. */
  chatStream: 16 * 1024 * 1024,
  chatStreamEvent: 1024 * 1024,
  /** The audio of one spoken sentence: minutes of PCM at 24 kHz. */
  speechAudio: 16 * 1024 * 1024,
  /** One message on a live transcription socket. */
  transcriptionMessage: 1024 * 1024,
  /** What is kept of a refusal's body for the operator's log. */
  refusalText: 8 * 1024
} as const

/**
 * The one way a provider's reply is read: bytes are counted as they arrive, and once more than
 * `limit` have come (or the declared length says they will), the connection is cut and the read
 * fails with `ReplyTooLarge`. With `onPiece`, each piece is handed over as it arrives (a stream;
 * a returned promise holds the next piece back until it settles) and nothing is kept; without it,
 * the whole body is answered; `onPiece` throwing ends the read with its error. `truncate` answers the first `limit` bytes instead of failing (for
 * text that is only logged).
 */
export const readReply = (
  response: http.IncomingMessage,
  limit: number,
  options: { readonly onPiece?: (piece: Buffer) => void | Promise<unknown>; readonly truncate?: boolean } = {}
): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const kept: Array<Buffer> = []
    let received = 0
    let settled = false
    const settle = (outcome: () => void) => {
      if (settled) return
      settled = true
      outcome()
    }
    const cutOff = () => {
      response.destroy()
      settle(
        () => (options.truncate ? resolve(Buffer.concat(kept).subarray(0, limit)) : reject(new ReplyTooLarge(limit)))
      )
    }
    const declared = Number(response.headers["content-length"])
    if (!options.truncate && Number.isFinite(declared) && declared > limit) return cutOff()
    response.on("data", (piece: Buffer) => {
      if (settled) return
      received += piece.length
      if (received > limit) {
        if (options.truncate) kept.push(piece)
        return cutOff()
      }
      if (!options.onPiece) return void kept.push(piece)
      let pending: void | Promise<unknown>
      try {
        pending = options.onPiece(piece)
      } catch (error) {
        response.destroy()
        return settle(() => reject(error))
      }
      if (pending) {
        response.pause()
        pending.then(() => response.resume(), (error) => {
          response.destroy()
          settle(() => reject(error))
        })
      }
    })
    response.on("end", () => settle(() => resolve(Buffer.concat(kept))))
    response.on("error", (error) => settle(() => reject(error)))
    response.on("close", () => settle(() => reject(new ReplyBrokenOff("the reply broke off"))))
  })

/**
 * `readReply` for a reply from the policy's HttpClient, as a stream of its pieces: the same bound,
 * checked against the declared length and against the bytes as they come. Failing ends the
 * response's stream, which aborts the request and so closes the connection: nothing past the
 * bound is read.
 */
export const boundedReplyStream = (
  response: HttpClientResponse.HttpClientResponse,
  limit: number
): Stream.Stream<Uint8Array, ReplyTooLarge | HttpClientError.ResponseError> =>
  Stream.suspend(() => {
    const declared = Number(response.headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) {
      // Pulled once so that the stream's end aborts the request.
      return Stream.take(response.stream, 1).pipe(Stream.drain, Stream.concat(Stream.fail(new ReplyTooLarge(limit))))
    }
    let received = 0
    return Stream.mapChunksEffect(response.stream, (chunk) => {
      for (const piece of chunk) received += piece.length
      return received > limit ? Effect.fail(new ReplyTooLarge(limit)) : Effect.succeed(chunk)
    })
  })

/** The whole reply, read within `limit` (see `boundedReplyStream`). */
export const readBoundedReply = (
  response: HttpClientResponse.HttpClientResponse,
  limit: number
): Effect.Effect<Buffer, ReplyTooLarge | HttpClientError.ResponseError> =>
  Stream.runCollect(boundedReplyStream(response, limit)).pipe(
    Effect.map((pieces) => Buffer.concat(Array.from(pieces)))
  )
