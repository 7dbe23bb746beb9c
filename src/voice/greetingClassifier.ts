/**
 * Who answered, judged from the first seconds of what the other end said. A machine announces
 * itself ("you have reached…", "leave a message after the tone") and talks on without a pause; a
 * person says a few words ("Hello?", "Hi, this is Sam") and waits for an answer.
 */
export type GreetingVerdict = "machine" | "human" | "unknown"

export interface GreetingJudgement {
  readonly verdict: GreetingVerdict
  /** 0–1: how sure the verdict is (0 when unknown). */
  readonly confidence: number
  /** The phrases or signs that decided it. */
  readonly cues: ReadonlyArray<string>
}

export interface GreetingHeard {
  /** Everything transcribed so far, in order. */
  readonly text: string
  /** How long the other end has been speaking without a pause of a turn's length. */
  readonly speechMs: number
  /** The other end paused after speaking (its turn looks over). */
  readonly paused: boolean
}

/** Voicemail phrasing, with how much each says on its own (1 = enough alone). */
const MACHINE_PHRASES: ReadonlyArray<readonly [RegExp, number, string]> = [
  [/\byou('ve| have)? reached\b/, 0.7, "you have reached"],
  [/\bleave (me |us )?(a |your )?(brief |short |detailed )?(message|name|number)\b/, 1, "leave a message"],
  [/\b(after|at) the (tone|beep|signal)\b/, 1, "after the tone"],
  [/\b(is|are|am) (not|currently not|unable to) (available|able to (come|take|answer))\b/, 0.8, "not available"],
  [/\b(unavailable|can'?t (come|get) to the phone|away from (my|the) (desk|phone))\b/, 0.8, "unavailable"],
  [/\bvoice ?mail\b/, 1, "voicemail"],
  [/\bmail ?box\b/, 0.9, "mailbox"],
  [/\b(get back to you|return your call|call you back)\b/, 0.8, "call you back"],
  [/\b(record your message|when you('re| are) finished|hang up or press)\b/, 1, "recording prompt"],
  [/\bthe (person|number|party) you (are|have) (calling|called|dialed|trying)\b/, 0.9, "the person you are calling"],
  [/\bplease (leave|record)\b/, 0.7, "please leave"],
  [/\b(not here right now|out of the office)\b/, 0.7, "not here"]
]

/**
 * Monologue signs: a person rarely says this many words, or speaks this long, before pausing. The
 * duration alone decides; the word count only with another sign (transcripts of noise run long).
 */
const MONOLOGUE_WORDS = 14
const MONOLOGUE_MS = 3500
/** A short opening followed by a pause is how people answer. */
const SHORT_GREETING_WORDS = 5

const words = (text: string) => text.split(/\s+/).filter((word) => /\w/.test(word))

export const classifyGreeting = (heard: GreetingHeard): GreetingJudgement => {
  const text = heard.text.toLowerCase().replace(/[^a-z0-9' ]+/g, " ").replace(/\s+/g, " ")
  const cues: Array<string> = []
  let score = 0
  for (const [pattern, weight, cue] of MACHINE_PHRASES) {
    if (pattern.test(text)) {
      cues.push(cue)
      score += weight
    }
  }
  const count = words(text).length
  if (count >= MONOLOGUE_WORDS) {
    cues.push("long opening monologue")
    score += 0.5
  }
  if (heard.speechMs >= MONOLOGUE_MS) {
    // Carriers' detection leans on the same sign (Twilio's speech threshold defaults to 2.4 s).
    cues.push("talks on without a pause")
    score += 1
  }
  if (score >= 1) return { verdict: "machine", confidence: Math.min(0.99, 0.6 + 0.2 * score), cues }
  if (heard.paused && count > 0 && count <= SHORT_GREETING_WORDS && score === 0) {
    return { verdict: "human", confidence: count <= 3 ? 0.85 : 0.7, cues: ["short greeting, then a pause"] }
  }
  return { verdict: "unknown", confidence: 0, cues }
}
