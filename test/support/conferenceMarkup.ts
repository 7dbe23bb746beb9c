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

const CONFERENCE_EVENTS = new Set([
  "start",
  "end",
  "join",
  "leave",
  "mute",
  "hold",
  "modify",
  "speaker",
  "announcement"
])

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

/**
 * A Plivo XML document that joins a conference (plivo.com/docs/voice/xml/conference): what it
 * speaks first (`<Speak>`), and the `<Conference>` element itself (not nested in a `<Dial>`),
 * whose `callbackUrl` hears members entering and leaving; `callbackMethod` is GET or POST.
 */
export const plivoConferenceMarkup = (markup: string): ConferenceMarkup | null => {
  const conference = /<Conference\b([^>]*)>([^<]+)<\/Conference>/.exec(markup)
  if (!conference) return null
  const found = attributes(conference[1]!)
  if (found.callbackMethod !== undefined && found.callbackMethod !== "GET" && found.callbackMethod !== "POST") {
    return null
  }
  const before = markup.slice(0, conference.index)
  return {
    said: [...before.matchAll(/<Speak\b[^>]*>([^<]*)<\/Speak>/g)].map((speak) => unescapeXml(speak[1]!.trim())),
    room: unescapeXml(conference[2]!.trim()),
    attributes: found,
    events: found.callbackUrl ? ["enter", "exit"] : []
  }
}
