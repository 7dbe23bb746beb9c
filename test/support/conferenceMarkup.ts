import { attributes, unescapeXml } from "./twimlStream.ts"

/**
 * A TwiML document that joins a conference (twilio.com/docs/voice/twiml/conference): what it says
 * first (`<Say>`), and the `<Conference>` noun, which Twilio only takes inside a `<Dial>`. Its
 * `statusCallbackEvent` is a space-separated list of start, end, join, leave, mute, hold, modify,
 * speaker and announcement; any other word makes the document invalid (null here).
 */
export interface ConferenceMarkup {
  readonly said: ReadonlyArray<string>
  readonly room: string
  readonly attributes: Readonly<Record<string, string>>
  readonly events: ReadonlyArray<string>
}

const CONFERENCE_EVENTS = new Set(["start", "end", "join", "leave", "mute", "hold", "modify", "speaker", "announcement"])

export const conferenceMarkup = (markup: string): ConferenceMarkup | null => {
  const dial = /<Dial\b[^>]*>\s*<Conference\b([^>]*)>([^<]+)<\/Conference>\s*<\/Dial>/.exec(markup)
  if (!dial) return null
  const found = attributes(dial[1]!)
  const events = (found.statusCallbackEvent ?? "").split(/\s+/).filter((word) => word !== "")
  if (events.some((event) => !CONFERENCE_EVENTS.has(event))) return null
  const before = markup.slice(0, dial.index)
  return {
    said: [...before.matchAll(/<Say\b[^>]*>([^<]*)<\/Say>/g)].map((say) => unescapeXml(say[1]!.trim())),
    room: unescapeXml(dial[2]!.trim()),
    attributes: found,
    events
  }
}
