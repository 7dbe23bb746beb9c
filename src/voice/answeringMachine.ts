import { type AnswerDecision, answerDetector } from "./answerDetector.ts"
import { beepDetector } from "./beepDetector.ts"

/**
 * The first seconds of an outbound call with in-call detection on: who answered, and, when a
 * message is to be left on a machine, the moment to start it. A machine's greeting ends in a beep
 * when it has one; some have none, so silence after the greeting, or a bound, will do.
 */
export type MachineWatchEvent =
  | { readonly _tag: "Decided"; readonly decision: AnswerDecision }
  | { readonly _tag: "MessageCue"; readonly atMs: number; readonly cause: "beep" | "greeting_ended" | "timeout" }

/** Silence after the greeting that means the machine is recording (no beep heard). */
const GREETING_END_SILENCE_MS = 2500
/** From the machine verdict: the message starts by then whatever was heard. */
const CUE_MAX_MS = 20_000

export interface MachineWatch {
  readonly audio: (pcm: Int16Array) => ReadonlyArray<MachineWatchEvent>
  readonly speechStarted: (atMs: number) => void
  readonly speechStopped: (atMs: number) => void
  readonly transcript: (text: string) => ReadonlyArray<MachineWatchEvent>
}

export const machineWatch = (sampleRate: number, options: { readonly leaveMessage: boolean }): MachineWatch => {
  const detector = answerDetector(sampleRate)
  // Its own beep detector from the first frame: a beep under way at the verdict is heard whole.
  const beeps = beepDetector(sampleRate)
  let phase: "detecting" | "awaiting_cue" | "done" = "detecting"
  let heardMs = 0
  let decidedAt = 0
  let speaking = false
  let quietSince = 0

  const decided = (decision: AnswerDecision): ReadonlyArray<MachineWatchEvent> => {
    const events: Array<MachineWatchEvent> = [{ _tag: "Decided", decision }]
    if (decision.verdict !== "machine" || !options.leaveMessage) {
      phase = "done"
    } else if (decision.beep !== null) {
      phase = "done"
      events.push({ _tag: "MessageCue", atMs: heardMs, cause: "beep" })
    } else {
      phase = "awaiting_cue"
      decidedAt = heardMs
    }
    return events
  }

  const cue = (cause: "beep" | "greeting_ended" | "timeout"): ReadonlyArray<MachineWatchEvent> => {
    phase = "done"
    return [{ _tag: "MessageCue", atMs: heardMs, cause }]
  }

  return {
    audio: (pcm) => {
      if (phase === "done") return []
      const beep = beeps.push(pcm)
      const decision = phase === "detecting" ? detector.audio(pcm) : null
      heardMs += (pcm.length * 1000) / sampleRate
      if (decision !== null) return decided(decision)
      if (phase !== "awaiting_cue") return []
      if (beep !== null) return cue("beep")
      if (!speaking && heardMs - Math.max(quietSince, decidedAt) >= GREETING_END_SILENCE_MS) {
        return cue("greeting_ended")
      }
      if (heardMs - decidedAt >= CUE_MAX_MS) return cue("timeout")
      return []
    },
    speechStarted: (atMs) => {
      speaking = true
      if (phase === "detecting") detector.speechStarted(atMs)
    },
    speechStopped: (atMs) => {
      speaking = false
      quietSince = atMs
      if (phase === "detecting") detector.speechStopped(atMs)
    },
    transcript: (text) => {
      if (phase !== "detecting") return []
      const decision = detector.transcript(text)
      return decision === null ? [] : decided(decision)
    }
  }
}
