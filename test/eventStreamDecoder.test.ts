import { describe, expect, it } from "@effect/vitest"
import { EventStreamDecoder, type ServerSentEvent } from "../layers/llm/eventStreamDecoder.ts"

const decode = (pieces: ReadonlyArray<string>): Array<ServerSentEvent> => {
  const decoder = new EventStreamDecoder()
  return [...pieces.flatMap((piece) => decoder.push(piece)), ...decoder.end()]
}

/** Every way of cutting `text` in two, and one character at a time. */
const splits = (text: string): Array<Array<string>> => [
  ...Array.from({ length: text.length + 1 }, (_, at) => [text.slice(0, at), text.slice(at)]),
  [...text]
]

describe("text/event-stream decoding", () => {
  const stream = [
    ": a comment, then an event split over two data lines",
    "data: first line",
    "data:second line",
    "",
    "event: error",
    "data: {\"error\":{\"message\":\"overloaded\"}}",
    "id: 7",
    "retry: 1000",
    "",
    "",
    "data",
    "",
    "data: [DONE]",
    "",
    ""
  ]
  const expected = [
    { event: "message", data: "first line\nsecond line" },
    { event: "error", data: "{\"error\":{\"message\":\"overloaded\"}}" },
    { event: "message", data: "" },
    { event: "message", data: "[DONE]" }
  ]

  for (const [name, ending] of [["LF", "\n"], ["CRLF", "\r\n"], ["CR", "\r"]] as const) {
    it(`gives the same events however a stream with ${name} line endings is cut into pieces`, () => {
      const text = stream.join(ending)
      for (const pieces of splits(text)) expect(decode(pieces)).toEqual(expected)
    })
  }

  it("drops an event the stream ended before terminating", () => {
    expect(decode(["data: whole\n\ndata: cut off\n"])).toEqual([{ event: "message", data: "whole" }])
    expect(decode(["data: whole\r\n\r"])).toEqual([{ event: "message", data: "whole" }])
  })
})
