/**
 * Which of the caller's audio goes to speech-to-text: each utterance with a short pre-roll before
 * voice detection noticed it (its onset, and a breath before the first word) and a short tail after
 * it ended (the flush asks for the words while audio still flows), never the silence in between.
 * A provider bills every second it is sent, and a per-utterance one (OpenAI transcription) would
 * otherwise be sent the whole backlog since its last flush.
 *
 * Pure: the caller pushes each frame with the voice events it completed, and sends what it answers.
 */
export interface UtteranceGate {
  readonly push: (
    pcm: Int16Array,
    events: ReadonlyArray<{ readonly _tag: string }>
  ) => ReadonlyArray<Int16Array>
}

export const utteranceGate = (
  sampleRate: number,
  options: { readonly preRollMs: number; readonly tailMs: number }
): UtteranceGate => {
  const msOf = (pcm: Int16Array) => (pcm.length * 1000) / sampleRate
  let speaking = false
  let tailLeftMs = 0
  let preRoll: Array<Int16Array> = []
  let preRollMs = 0
  return {
    push: (pcm, events) => {
      for (const event of events) {
        if (event._tag === "SpeechStarted") speaking = true
        else if (event._tag === "SpeechEnded") {
          speaking = false
          tailLeftMs = options.tailMs
        }
      }
      if (speaking) {
        const out = [...preRoll, pcm]
        preRoll = []
        preRollMs = 0
        return out
      }
      if (tailLeftMs > 0) {
        tailLeftMs -= msOf(pcm)
        return [pcm]
      }
      preRoll.push(pcm)
      preRollMs += msOf(pcm)
      while (preRoll.length > 1 && preRollMs - msOf(preRoll[0]!) >= options.preRollMs) {
        preRollMs -= msOf(preRoll.shift()!)
      }
      return []
    }
  }
}
