export interface StreamEvent {
  readonly event: string
  readonly data: unknown
}

/** Server-sent events from a response body, one parsed frame at a time. */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffered = ""
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return
    buffered += decoder.decode(value, { stream: true })
    let end = buffered.indexOf("\n\n")
    while (end >= 0) {
      const frame = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      const lines = frame.split("\n")
      const event = lines.find((line) => line.startsWith("event:"))?.slice(6).trim() ?? "message"
      const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join("\n")
      if (data) yield { event, data: JSON.parse(data) }
      end = buffered.indexOf("\n\n")
    }
  }
}
