/**
 * Turns per-window speech probabilities into SpeechStarted / SpeechEnded, the way Silero's own
 * `get_speech_timestamps` does: a window at or above `threshold` is speech, one below
 * `threshold - 0.15` is silence, and anything in between keeps the current state (hysteresis, so a
 * probability wavering around the threshold does not flap). Speech is reported only once it has
 * lasted `minSpeechMs` (clicks and breaths are shorter); it ends once silence has lasted
 * `minSilenceMs`, and the end is dated at the start of that silence. With `pauseMs`, a silence
 * inside speech that has lasted that long (shorter than `minSilenceMs`) is reported as a pause,
 * and speech coming back after it as resumed: the turn may be ending, and work that takes time
 * (flushing the transcript, preparing the answer) can start before it has surely ended.
 *
 * Pure: the caller feeds windows in order and keeps the returned state.
 */
export interface SegmenterSettings {
  readonly threshold: number
  readonly minSpeechMs: number
  readonly minSilenceMs: number
  /** Silence this long inside speech is reported as a pause; omitted, pauses are not reported. */
  readonly pauseMs?: number
}

interface ProbabilityWindow {
  /** Start and end of the window on the audio clock, in ms. */
  readonly startMs: number
  readonly endMs: number
  readonly probability: number
}

type SegmentEvent =
  | { readonly _tag: "SpeechStarted"; readonly atMs: number }
  | { readonly _tag: "SpeechEnded"; readonly atMs: number; readonly speechMs: number }
  | { readonly _tag: "SpeechPaused"; readonly atMs: number }
  | { readonly _tag: "SpeechResumed"; readonly atMs: number }

export type SegmenterState =
  | { readonly _tag: "Silence" }
  /** Speech heard since `sinceMs` but not yet long enough to report. */
  | { readonly _tag: "Onset"; readonly sinceMs: number }
  /** Reported speech; `silenceSinceMs` is set while a pause is being timed, `paused` once it was reported. */
  | {
    readonly _tag: "Speech"
    readonly sinceMs: number
    readonly silenceSinceMs: number | null
    readonly paused: boolean
  }

export const SILENCE: SegmenterState = { _tag: "Silence" }

/** Silero's hysteresis gap; the floor keeps a very low threshold from making nothing silent. */
const HYSTERESIS = 0.15
const silenceBelow = (threshold: number) => Math.max(threshold - HYSTERESIS, 0.01)

interface Segmented {
  readonly state: SegmenterState
  readonly events: ReadonlyArray<SegmentEvent>
}

export const segmentWindow = (
  state: SegmenterState,
  settings: SegmenterSettings,
  window: ProbabilityWindow
): Segmented => {
  const speech = window.probability >= settings.threshold
  const silence = window.probability < silenceBelow(settings.threshold)
  switch (state._tag) {
    case "Silence": {
      if (!speech) return { state, events: [] }
      return onset(window.startMs, settings, window)
    }
    case "Onset": {
      if (silence) return { state: SILENCE, events: [] }
      return onset(state.sinceMs, settings, window)
    }
    case "Speech": {
      if (speech) {
        if (state.silenceSinceMs === null) return { state, events: [] }
        return {
          state: { ...state, silenceSinceMs: null, paused: false },
          events: state.paused ? [{ _tag: "SpeechResumed", atMs: window.startMs }] : []
        }
      }
      if (!silence) return { state, events: [] }
      const silenceSinceMs = state.silenceSinceMs ?? window.startMs
      const silentMs = window.endMs - silenceSinceMs
      if (silentMs >= settings.minSilenceMs) {
        return {
          state: SILENCE,
          events: [{ _tag: "SpeechEnded", atMs: silenceSinceMs, speechMs: silenceSinceMs - state.sinceMs }]
        }
      }
      if (!state.paused && settings.pauseMs !== undefined && silentMs >= settings.pauseMs) {
        return {
          state: { ...state, silenceSinceMs, paused: true },
          events: [{ _tag: "SpeechPaused", atMs: silenceSinceMs }]
        }
      }
      return { state: { ...state, silenceSinceMs }, events: [] }
    }
  }
}

const onset = (sinceMs: number, settings: SegmenterSettings, window: ProbabilityWindow): Segmented =>
  window.endMs - sinceMs >= settings.minSpeechMs
    ? {
      state: { _tag: "Speech", sinceMs, silenceSinceMs: null, paused: false },
      events: [{ _tag: "SpeechStarted", atMs: sinceMs }]
    }
    : { state: { _tag: "Onset", sinceMs }, events: [] }

/** Feeds several windows in order. */
export const segmentWindows = (
  state: SegmenterState,
  settings: SegmenterSettings,
  windows: ReadonlyArray<ProbabilityWindow>
): Segmented => {
  const events: Array<SegmentEvent> = []
  let current = state
  for (const window of windows) {
    const next = segmentWindow(current, settings, window)
    current = next.state
    events.push(...next.events)
  }
  return { state: current, events }
}
