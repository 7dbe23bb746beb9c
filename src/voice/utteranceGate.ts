/**
 * Which of the caller's audio goes to speech-to-text: each utterance from a short pre-roll before
 * its onset (voice detection dates the onset back to the first window of speech; the pre-roll keeps
 * a soft first consonant) until voice detection reports a pause, never the silence in between. A
 * pause that turns out to be inside the utterance (speech resumes) is sent after all, so the
 * provider hears it whole. A provider bills every second it is sent, and a per-utterance one
 * (OpenAI transcription) would otherwise be sent the whole backlog since its last flush.
 *
 * The tail after the last word is the pause voice detection needs to report (its `pauseMs`); the
 * flush at the end of the utterance asks for the words without waiting for more audio.
 *
 * Pure: the caller pushes each frame with the voice events it completed, and sends what it answers.
 */
export interface UtteranceGate {
  readonly push: (pcm: Int16Array, events: ReadonlyArray<GateEvent>) => ReadonlyArray<Int16Array>
}

/** Voice detection's events, times on the audio's own clock (ms of audio pushed before them). */
export type GateEvent =
  | { readonly _tag: "SpeechStarted"; readonly atMs: number }
  | { readonly _tag: "SpeechPaused" | "SpeechResumed" | "SpeechEnded" }

interface Frame {
  readonly pcm: Int16Array
  readonly endMs: number
}

/** Unsent audio kept at most this long before the pre-roll: voice detection dates an onset this far back. */
const ONSET_REACH_MS = 1000

export const utteranceGate = (sampleRate: number, options: { readonly preRollMs: number }): UtteranceGate => {
  let clockMs = 0
  let sending = false
  /** Audio not sent: the silence before an onset, or a pause that may yet be inside the utterance. */
  let unsent: Array<Frame> = []
  return {
    push: (pcm, events) => {
      clockMs += (pcm.length * 1000) / sampleRate
      unsent.push({ pcm, endMs: clockMs })
      const out: Array<Int16Array> = []
      const release = (fromMs: number) => {
        for (const frame of unsent) if (frame.endMs > fromMs) out.push(frame.pcm)
        unsent = []
      }
      for (const event of events) {
        switch (event._tag) {
          case "SpeechStarted":
            release(event.atMs - options.preRollMs)
            sending = true
            break
          case "SpeechResumed":
            release(Number.NEGATIVE_INFINITY)
            sending = true
            break
          case "SpeechPaused":
          case "SpeechEnded":
            sending = false
            break
        }
      }
      if (sending) release(Number.NEGATIVE_INFINITY)
      else {
        const keepFromMs = clockMs - options.preRollMs - ONSET_REACH_MS
        while (unsent.length > 0 && unsent[0]!.endMs <= keepFromMs) unsent.shift()
      }
      return out
    }
  }
}
