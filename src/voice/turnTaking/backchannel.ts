/**
 * Listener sounds that say "go on", not "stop": said over the agent they must not interrupt it.
 * Per language (the call's language's primary subtag); an unknown language falls back to English.
 */
const BACKCHANNELS: Readonly<Record<string, ReadonlySet<string>>> = {
  en: new Set([
    "uh-huh",
    "uh huh",
    "mm-hmm",
    "mhm",
    "mm",
    "hmm",
    "okay",
    "ok",
    "right",
    "yeah",
    "yep",
    "yes",
    "sure",
    "alright",
    "all right",
    "i see",
    "got it",
    "cool",
    "great"
  ]),
  de: new Set(["ja", "mhm", "okay", "genau", "aha", "stimmt", "gut", "alles klar"]),
  fr: new Set(["oui", "d'accord", "ouais", "mhm", "ok", "okay", "ah bon", "je vois"]),
  es: new Set(["sí", "si", "vale", "ajá", "claro", "ok", "okay", "ya", "entiendo", "mhm"]),
  pt: new Set(["sim", "tá", "certo", "claro", "ok", "okay", "entendi", "uhum"]),
  it: new Set(["sì", "si", "certo", "ok", "okay", "capito", "va bene", "mhm"]),
  nl: new Set(["ja", "oké", "okay", "klopt", "precies", "mhm", "ah"])
}

/** Words as a transcript gives them, lower case, without the punctuation around them. */
export const wordsOf = (text: string): ReadonlyArray<string> =>
  text.toLowerCase().split(/\s+/).map((word) => word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}'-]+$/gu, "")).filter(
    Boolean
  )

const phrasesFor = (language: string) => BACKCHANNELS[language.toLowerCase().split("-")[0]!] ?? BACKCHANNELS.en!

/**
 * The words of `text` that are not backchannels. A backchannel may be one or two words
 * ("all right", "got it") and may repeat ("yeah yeah"); anything else counts.
 */
export const substantiveWords = (text: string, language: string): ReadonlyArray<string> => {
  const phrases = phrasesFor(language)
  const words = wordsOf(text)
  const kept: Array<string> = []
  for (let index = 0; index < words.length; index++) {
    const pair = index + 1 < words.length ? `${words[index]} ${words[index + 1]}` : ""
    if (pair && phrases.has(pair)) index++
    else if (!phrases.has(words[index]!)) kept.push(words[index]!)
  }
  return kept
}

/**
 * Whether the words so far may still turn out to be a backchannel: all of them are one, but the
 * last, which opens a two-word one ("I" of "I see", "got" of "got it"). Interim transcripts reveal
 * a phrase word by word, so its first word alone must not be taken for an interruption.
 */
export const mayStillBeBackchannel = (text: string, language: string): boolean => {
  const words = wordsOf(text)
  const last = words.at(-1)
  if (last === undefined) return false
  const opensPhrase = [...phrasesFor(language)].some((phrase) => phrase.startsWith(`${last} `))
  return opensPhrase && substantiveWords(words.slice(0, -1).join(" "), language).length === 0
}
