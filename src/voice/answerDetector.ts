import { type Beep, beepDetector } from "./beepDetector.ts"
import { classifyGreeting, type GreetingVerdict } from "./greetingClassifier.ts"

/**
 * In-call answering-machine detection for the first seconds of an outbound call, on any carrier:
 * the callee's audio goes to the beep detector, its transcripts to the greeting classifier, and
 * voice detection's speech starts and stops tell how long it talks and when it pauses. All times
 * are milliseconds of the callee's audio since the call was answered.
 */
export interface AnswerDetectionSettings {
  /** No verdict by then: the call goes on as if a person answered. */
  readonly windowMs: number
  /** Silence after speech that counts as the callee waiting for an answer. */
  readonly pauseMs: number
}

export const defaultAnswerDetection: AnswerDetectionSettings = { windowMs: 8000, pauseMs: 800 }

export interface AnswerDecision {
  readonly verdict: Exclude<GreetingVerdict, "unknown"> | "undecided"
  readonly confidence: number
  readonly atMs: number
  readonly cues: ReadonlyArray<string>
  /** The beep, when the decision came from one (a message can start right away). */
  readonly beep: Beep | null
}

export interface AnswerDetector {
  /** The callee's audio, in order; returns the decision when it is made. */
  readonly audio: (pcm: Int16Array) => AnswerDecision | null
  readonly speechStarted: (atMs: number) => void
  readonly speechStopped: (atMs: number) => void
  /** A final transcript of the callee; returns the decision when it is made. */
  readonly transcript: (text: string) => AnswerDecision | null
}

export const answerDetector = (
  sampleRate: number,
  settings: AnswerDetectionSettings = defaultAnswerDetection
): AnswerDetector => {
  const beeps = beepDetector(sampleRate)
  let heardMs = 0
  let text = ""
  /** The start of the callee's current stretch of talk (pauses shorter than a turn's bridged). */
  let talkStartedAt: number | null = null
  let speaking = false
  let lastStoppedAt: number | null = null
  let decided = false

  const decide = (decision: AnswerDecision) => {
    decided = true
    return decision
  }

  /** How long the callee has talked without a pause of a turn's length. */
  const speechMs = () => talkStartedAt === null ? 0 : (speaking ? heardMs : lastStoppedAt ?? heardMs) - talkStartedAt

  const judge = (): AnswerDecision | null => {
    const paused = !speaking && lastStoppedAt !== null && heardMs - lastStoppedAt >= settings.pauseMs
    const judgement = classifyGreeting({ text, speechMs: speechMs(), paused })
    if (judgement.verdict !== "unknown") {
      return decide({ ...judgement, verdict: judgement.verdict, atMs: heardMs, beep: null })
    }
    if (heardMs >= settings.windowMs) {
      return decide({ verdict: "undecided", confidence: 0, atMs: heardMs, cues: judgement.cues, beep: null })
    }
    return null
  }

  return {
    audio: (pcm) => {
      if (decided) return null
      const beep = beeps.push(pcm)
      heardMs += (pcm.length * 1000) / sampleRate
      if (beep !== null) {
        return decide({ verdict: "machine", confidence: 0.95, atMs: heardMs, cues: ["beep"], beep })
      }
      return judge()
    },
    speechStarted: (atMs) => {
      if (talkStartedAt === null || (lastStoppedAt !== null && atMs - lastStoppedAt >= settings.pauseMs)) {
        talkStartedAt = atMs
      }
      speaking = true
    },
    speechStopped: (atMs) => {
      speaking = false
      lastStoppedAt = atMs
    },
    transcript: (piece) => {
      if (decided) return null
      text = `${text} ${piece}`.trim()
      return judge()
    }
  }
}
