import { wordsOf } from "./backchannel.ts"
import type { TurnTakingSettings } from "./settings.ts"

/** What the agent's last words were, which changes how soon a short answer is complete. */
export interface TurnContext {
  readonly agentAskedQuestion: boolean
  /** This call's transcription punctuates: a sentence without final punctuation is unfinished. */
  readonly punctuated: boolean
}

/**
 * How long the caller's silence must last before `text` is answered: the text turn detector. An
 * end-of-turn model's verdict on the caller's audio, when the call has one and it has answered,
 * takes its place (`turnDelay.ts`).
 */
export type EndpointingDelay = (text: string, context: TurnContext, settings: TurnTakingSettings) => number

/** Words a speaker trails off on when they mean to go on. */
const CONTINUATIONS = new Set([
  "and",
  "but",
  "so",
  "or",
  "because",
  "then",
  "um",
  "uh",
  "er",
  "erm",
  "like",
  "the",
  "a",
  "an",
  "to",
  "with",
  "my",
  "is",
  "if",
  "that"
])

const SHORT_ANSWERS = new Set([
  "yes",
  "no",
  "yeah",
  "yep",
  "nope",
  "nah",
  "sure",
  "correct",
  "right",
  "okay",
  "ok",
  "exactly",
  "definitely",
  "absolutely"
])

const unfinished = (text: string, words: ReadonlyArray<string>, context: TurnContext) => {
  const last = words.at(-1)
  if (last !== undefined && CONTINUATIONS.has(last)) return true
  // A clause that ends in a comma, a colon or a dash is followed by more, whoever punctuated it.
  if (/[,;:\u2013\u2014-]\s*$/u.test(text)) return true
  return context.punctuated && !/[.?!…。？！]["'”’)]*\s*$/u.test(text)
}

export const heuristicEndpointing: EndpointingDelay = (text, context, settings) => {
  const words = wordsOf(text)
  if (unfinished(text, words, context)) return settings.endpointingMs + settings.incompleteExtraMs
  if (context.agentAskedQuestion && words.length > 0 && words.length <= 3 && SHORT_ANSWERS.has(words[0]!)) {
    return Math.min(settings.endpointingMs, settings.shortAnswerMs)
  }
  return settings.endpointingMs
}

/** Smart-turn's own threshold: at or above it the turn is complete. */
export const COMPLETE_THRESHOLD = 0.5

/**
 * The silence to wait out when the end-of-turn model has judged the caller's audio: the ordinary
 * endpointing when it hears a finished turn, the longer unfinished-sentence wait when it does not.
 * It takes the text heuristic's place, as it hears what the words cannot say (intonation, a
 * drawn-out last syllable).
 */
export const predictedEndpointing = (complete: number, settings: TurnTakingSettings): number =>
  complete >= COMPLETE_THRESHOLD ? settings.endpointingMs : settings.endpointingMs + settings.incompleteExtraMs
