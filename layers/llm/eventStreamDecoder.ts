/** One event of a `text/event-stream`: its type (`message` unless named) and its data lines joined by newlines. */
export interface ServerSentEvent {
  readonly event: string
  readonly data: string
}

/** An event (or a line) grew past the decoder's bound before it ended. */
export class EventTooLarge extends Error {}

/**
 * Decodes a `text/event-stream` fed in arbitrary pieces, as the HTML standard parses one ("Parsing
 * an event stream"): lines end in CRLF, LF or CR, `data:` lines accumulate until a blank line
 * dispatches them, comments and other fields are skipped, and an event left unterminated when the
 * stream ends is dropped. An event whose text (its lines so far) exceeds `eventLimit` characters
 * throws `EventTooLarge`: a stream that never ends its line or its event cannot grow without bound.
 */
export class EventStreamDecoder {
  private rest = ""
  private data: Array<string> = []
  private dataLength = 0
  private event = ""
  private readonly eventLimit: number

  constructor(eventLimit = Number.POSITIVE_INFINITY) {
    this.eventLimit = eventLimit
  }

  /** The events completed by `text`. */
  push(text: string): Array<ServerSentEvent> {
    const buffer = this.rest + text
    const events: Array<ServerSentEvent> = []
    let start = 0
    let cr = buffer.indexOf("\r")
    for (;;) {
      const lf = buffer.indexOf("\n", start)
      if (cr !== -1 && cr < start) cr = buffer.indexOf("\r", start)
      let end: number
      let next: number
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A CR ending the piece may be the first half of a CRLF: wait for the next piece.
        if (cr === buffer.length - 1) break
        end = cr
        next = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1
      } else if (lf !== -1) {
        end = lf
        next = lf + 1
      } else break
      this.line(buffer.slice(start, end), events)
      start = next
    }
    this.rest = buffer.slice(start)
    if (this.rest.length + this.dataLength > this.eventLimit) {
      throw new EventTooLarge(`an event exceeded ${this.eventLimit} characters`)
    }
    return events
  }

  /** The stream has ended: a last line held back for a possible CRLF still counts. */
  end(): Array<ServerSentEvent> {
    const events: Array<ServerSentEvent> = []
    if (this.rest.endsWith("\r")) this.line(this.rest.slice(0, -1), events)
    this.rest = ""
    return events
  }

  private line(line: string, events: Array<ServerSentEvent>) {
    if (line === "") {
      if (this.data.length > 0) events.push({ event: this.event || "message", data: this.data.join("\n") })
      this.data = []
      this.dataLength = 0
      this.event = ""
      return
    }
    if (line.charCodeAt(0) === 58) return // ":" starts a comment
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? "" : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    if (field === "data") {
      this.data.push(value)
      this.dataLength += value.length
      if (this.dataLength > this.eventLimit) throw new EventTooLarge(`an event exceeded ${this.eventLimit} characters`)
    } else if (field === "event") this.event = value
  }
}
