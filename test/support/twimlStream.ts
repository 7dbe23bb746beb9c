/**
 * The bidirectional media stream a TwiML answer asks for: `<Connect><Stream url="…">` with its
 * `<Parameter name value/>` children (twilio.com/docs/voice/twiml/stream). `<Start><Stream>` forks
 * one-way audio and is not a conversation, so it is not reported.
 */
interface TwimlStream {
  /** As written in the markup (what Twilio connects to and signs). */
  readonly url: string
  readonly parameters: Readonly<Record<string, string>>
}

export const unescapeXml = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, entity: string) => {
    switch (entity.toLowerCase()) {
      case "amp":
        return "&"
      case "lt":
        return "<"
      case "gt":
        return ">"
      case "quot":
        return "\""
      case "apos":
        return "'"
      default:
        return String.fromCodePoint(
          entity[1] === "x" || entity[1] === "X" ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10)
        )
    }
  })

export const attributes = (tag: string) => {
  const found: Record<string, string> = {}
  for (const [, name, double, single] of tag.matchAll(/([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    found[name!] = unescapeXml(double ?? single ?? "")
  }
  return found
}

export const twimlStream = (markup: string): TwimlStream | null => {
  const connect = /<Connect\b[^>]*>([\s\S]*?)<\/Connect>/.exec(markup)?.[1]
  const stream = connect === undefined ? undefined : /<Stream\b([^>]*)>/.exec(connect)?.[1]
  const url = stream === undefined ? undefined : attributes(stream)["url"]
  if (url === undefined) return null
  const parameters: Record<string, string> = {}
  for (const [, tag] of connect!.matchAll(/<Parameter\b([^>]*)>/g)) {
    const { name, value } = attributes(tag!)
    if (name !== undefined) parameters[name] = value ?? ""
  }
  return { url, parameters }
}
