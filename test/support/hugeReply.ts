import * as http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A loopback "provider" whose every reply is enormous: `prefix`, then `piece` over and over up to
 * `total` bytes (bounded, so a client that never stops reading still finishes), written as fast
 * as the client takes them. It records how much of each reply it got to send before the client
 * hung up.
 */
export interface HugeReply {
  readonly url: string
  /** Bytes written into each reply so far, in order of the requests. */
  readonly sent: ReadonlyArray<number>
  /** How each reply ended: cut off by the client before it was whole, or sent whole. */
  readonly ended: ReadonlyArray<Promise<"cut off" | "whole">>
  readonly close: () => Promise<void>
}

export interface HugeReplyOptions {
  readonly contentType: string
  readonly total: number
  readonly prefix?: string
  readonly piece?: string | Buffer
  readonly status?: number
  /** Announce the whole length up front (Content-Length) instead of streaming it chunked. */
  readonly declareLength?: boolean
}

export const startHugeReply = async (options: HugeReplyOptions): Promise<HugeReply> => {
  const sent: Array<number> = []
  const ended: Array<Promise<"cut off" | "whole">> = []
  const piece = Buffer.isBuffer(options.piece)
    ? options.piece
    : Buffer.from((options.piece ?? "a").repeat(64 * 1024 / (options.piece?.length ?? 1)))
  const server = http.createServer((request, response) => {
    request.resume()
    const index = sent.push(0) - 1
    ended.push(
      new Promise((resolve) => response.on("close", () => resolve(response.writableFinished ? "whole" : "cut off")))
    )
    response.writeHead(options.status ?? 200, {
      "content-type": options.contentType,
      ...(options.declareLength ? { "content-length": String(options.total) } : {})
    })
    const prefix = Buffer.from(options.prefix ?? "")
    response.write(prefix)
    sent[index] = prefix.length
    const pump = () => {
      while (!response.destroyed && sent[index]! < options.total) {
        const next = piece.subarray(0, Math.min(piece.length, options.total - sent[index]!))
        sent[index] = sent[index]! + next.length
        if (!response.write(next)) return void response.once("drain", pump)
      }
      if (!response.destroyed) response.end()
    }
    pump()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent,
    ended,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
