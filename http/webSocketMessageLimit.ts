import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"

/** RFC 6455 §7.4.1: "a message that is too big for it to process". */
const MESSAGE_TOO_BIG = 1009

/**
 * Follows the frames a WebSocket client sends (RFC 6455 §5.2) from their headers alone, and says
 * whether every message so far stayed within `maxBytes`: a message is its data frame and any
 * continuation frames up to the one marked final; control frames in between do not count.
 * Feed it the connection's bytes in order, in chunks of any size.
 */
export const messageSizeGuard = (maxBytes: number) => {
  const header = new Uint8Array(14)
  let headerBytes = 0
  let payloadLeft = 0
  let messageBytes = 0
  const headerLength = () => {
    if (headerBytes < 2) return 2
    const length7 = header[1]! & 0x7f
    return 2 + (length7 === 126 ? 2 : length7 === 127 ? 8 : 0) + (header[1]! & 0x80 ? 4 : 0)
  }
  const payloadLength = () => {
    const length7 = header[1]! & 0x7f
    if (length7 === 126) return header[2]! * 256 + header[3]!
    if (length7 === 127) {
      return (header[2]! * 2 ** 24 + header[3]! * 2 ** 16 + header[4]! * 256 + header[5]!) * 2 ** 32 +
        header[6]! * 2 ** 24 + header[7]! * 2 ** 16 + header[8]! * 256 + header[9]!
    }
    return length7
  }
  return (chunk: Uint8Array): boolean => {
    let at = 0
    while (at < chunk.length) {
      if (payloadLeft > 0) {
        const skipped = Math.min(payloadLeft, chunk.length - at)
        payloadLeft -= skipped
        at += skipped
        continue
      }
      header[headerBytes++] = chunk[at++]!
      if (headerBytes < headerLength()) continue
      const isFinal = (header[0]! & 0x80) !== 0
      const isControl = (header[0]! & 0x08) !== 0
      payloadLeft = payloadLength()
      headerBytes = 0
      if (isControl) continue
      messageBytes += payloadLeft
      if (messageBytes > maxBytes) return false
      if (isFinal) messageBytes = 0
    }
    return true
  }
}

const closeFrame = (code: number, reason: string) => {
  const text = Buffer.from(reason)
  return Buffer.concat([Buffer.from([0x88, 2 + text.length, code >> 8, code & 0xff]), text])
}

/**
 * Closes a WebSocket with 1009 as soon as its client announces a message larger than `maxBytes`,
 * before the message is buffered. The platform's WebSocket server keeps `ws`'s default limit of
 * 100 MiB per message and takes no options, so the limit is kept here, on the connection itself.
 * Call it before upgrading: it must see the connection's bytes from the first one on (a client
 * sends none before the handshake's answer, RFC 6455 §4.1).
 */
export const limitWebSocketMessages = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.sync(() => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    // Node hands the connection over on these headers (an upgrade); otherwise its bytes belong
    // to the HTTP parser and are left alone.
    const isUpgrade = /\bupgrade\b/i.test(incoming.headers.connection ?? "") && incoming.headers.upgrade !== undefined
    if (!isUpgrade) return
    const socket = incoming.socket
    const withinLimit = messageSizeGuard(maxBytes)
    const onData = (chunk: Buffer) => {
      if (withinLimit(chunk)) return
      socket.off("data", onData)
      socket.pause()
      socket.end(closeFrame(MESSAGE_TOO_BIG, `Messages are limited to ${maxBytes} bytes`), () => socket.destroy())
    }
    socket.on("data", onData)
  })
