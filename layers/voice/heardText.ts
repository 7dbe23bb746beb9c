/** A sentence of a reply as it was played: its length, where it began on the call's played-audio clock. */
export interface SpokenSentence {
  readonly text: string
  ms: number
  /** The call's played audio (ms) when this sentence began playing; null until it was sent. */
  startAt: number | null
  /** The carrier confirmed (by its mark) that all of it played. */
  heard: boolean
}

/**
 * What the caller heard of a reply: whole sentences whose marks came back, then the share of
 * the sentence playing at `playedMs`, in words (speech runs at a roughly even pace through a
 * sentence). A sentence cleared and replayed after a false interruption counts once.
 */
export const heardPart = (sentences: ReadonlyArray<SpokenSentence>, playedMs: number): string => {
  const heard: Array<string> = []
  for (const sentence of sentences) {
    if (sentence.heard) {
      heard.push(sentence.text)
      continue
    }
    if (sentence.startAt !== null && sentence.ms > 0) {
      const words = sentence.text.split(/\s+/)
      const share = Math.floor((words.length * Math.max(0, playedMs - sentence.startAt)) / sentence.ms)
      if (share >= words.length) heard.push(sentence.text)
      else if (share > 0) heard.push(words.slice(0, share).join(" "))
    }
    break
  }
  return heard.join(" ")
}
