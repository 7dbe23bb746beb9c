import { attributes, unescapeXml } from "./twimlStream.ts"

/**
 * The `<Dial>` of a TwiML (twilio.com/docs/voice/twiml/dial) or Plivo XML (plivo.com/docs/voice/xml/dial)
 * document: its attributes and the one endpoint noun it rings (`<Number>`, `<Sip>`, Plivo's `<User>`).
 */
export interface DialMarkup {
  readonly attributes: Readonly<Record<string, string>>
  readonly noun: {
    readonly tag: string
    readonly attributes: Readonly<Record<string, string>>
    readonly text: string
  }
}

export const dialMarkup = (markup: string): DialMarkup | null => {
  const dial = /<Dial\b([^>]*)>([\s\S]*?)<\/Dial>/.exec(markup)
  if (!dial) return null
  const noun = /<(Number|Sip|User)\b([^>]*)>([^<]*)<\/\1>/.exec(dial[2]!)
  if (!noun) return null
  return {
    attributes: attributes(dial[1]!),
    noun: { tag: noun[1]!, attributes: attributes(noun[2]!), text: unescapeXml(noun[3]!.trim()) }
  }
}

/** Whether a document has nothing left for the call to do but hang up (`<Hangup/>`, or no verb at all). */
export const endsTheCall = (markup: string): boolean =>
  /<Hangup\s*\/?>/.test(markup) || !/<(Say|Play|Dial|Connect|Stream|Gather|Redirect|Speak|Record)\b/.test(markup)
