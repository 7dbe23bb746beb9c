import { describe, expect, it } from "vitest"
import { type SegmenterSettings, segmentWindows, SILENCE } from "../src/voice/speechSegmenter.ts"

const settings: SegmenterSettings = { threshold: 0.5, minSpeechMs: 64, minSilenceMs: 96 }

/** Probabilities for consecutive 32 ms windows (Silero at 8 kHz: 256 samples). */
const windows = (probabilities: ReadonlyArray<number>) =>
  probabilities.map((probability, i) => ({ startMs: i * 32, endMs: (i + 1) * 32, probability }))

const eventsOf = (probabilities: ReadonlyArray<number>, with_: Partial<SegmenterSettings> = {}) =>
  segmentWindows(SILENCE, { ...settings, ...with_ }, windows(probabilities)).events

describe("speech segmentation", () => {
  it.each(
    [
      ["silence stays silent", [0.1, 0.2, 0.05, 0.3], []],
      ["a single loud window is a click, not speech", [0.1, 0.9, 0.1, 0.1, 0.1], []],
      ["speech is reported once it lasts minSpeechMs, dated at its first window", [0.1, 0.9, 0.8], [{
        _tag: "SpeechStarted",
        atMs: 32
      }]],
      [
        "speech ends after minSilenceMs of silence, dated where the silence began",
        [0.9, 0.9, 0.9, 0.1, 0.1, 0.1],
        [
          { _tag: "SpeechStarted", atMs: 0 },
          { _tag: "SpeechEnded", atMs: 96, speechMs: 96 }
        ]
      ],
      [
        "a pause shorter than minSilenceMs does not end speech",
        [0.9, 0.9, 0.1, 0.1, 0.9, 0.1, 0.1],
        [{ _tag: "SpeechStarted", atMs: 0 }]
      ],
      [
        "probabilities between the thresholds keep speech going (hysteresis)",
        [0.9, 0.9, 0.4, 0.4, 0.4, 0.4, 0.1, 0.1, 0.1],
        [
          { _tag: "SpeechStarted", atMs: 0 },
          { _tag: "SpeechEnded", atMs: 192, speechMs: 192 }
        ]
      ],
      ["an onset interrupted by silence is dropped", [0.9, 0.1, 0.9, 0.1], []],
      ["an onset wavering between the thresholds still counts", [0.9, 0.4, 0.1], [{ _tag: "SpeechStarted", atMs: 0 }]],
      [
        "two utterances give two start/end pairs",
        [0.9, 0.9, 0.1, 0.1, 0.1, 0.9, 0.9, 0.1, 0.1, 0.1],
        [
          { _tag: "SpeechStarted", atMs: 0 },
          { _tag: "SpeechEnded", atMs: 64, speechMs: 64 },
          { _tag: "SpeechStarted", atMs: 160 },
          { _tag: "SpeechEnded", atMs: 224, speechMs: 64 }
        ]
      ]
    ] as const
  )("%s", (_name, probabilities, expected) => {
    expect(eventsOf(probabilities)).toEqual(expected)
  })

  it("reports a pause after pauseMs of silence and speech coming back after it, once each", () => {
    expect(eventsOf([0.9, 0.9, 0.1, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], { pauseMs: 64, minSilenceMs: 160 }))
      .toEqual([
        { _tag: "SpeechStarted", atMs: 0 },
        { _tag: "SpeechPaused", atMs: 64 },
        { _tag: "SpeechResumed", atMs: 160 },
        { _tag: "SpeechPaused", atMs: 192 },
        { _tag: "SpeechEnded", atMs: 192, speechMs: 192 }
      ])
  })

  it("a gap shorter than pauseMs is neither a pause nor a resumption", () => {
    expect(eventsOf([0.9, 0.9, 0.1, 0.9, 0.9], { pauseMs: 64 })).toEqual([{ _tag: "SpeechStarted", atMs: 0 }])
  })

  it("a higher threshold ignores what the default one hears (the agent's echo)", () => {
    const echo = [0.6, 0.65, 0.6, 0.6, 0.1]
    expect(eventsOf(echo)).toEqual([{ _tag: "SpeechStarted", atMs: 0 }])
    expect(eventsOf(echo, { threshold: 0.8 })).toEqual([])
  })

  it("state carries across calls, so windows may arrive in any grouping", () => {
    const probabilities = [0.1, 0.9, 0.9, 0.9, 0.2, 0.2, 0.2, 0.2, 0.9, 0.9]
    const whole = segmentWindows(SILENCE, settings, windows(probabilities)).events
    let state = SILENCE
    const pieces = []
    for (const window of windows(probabilities)) {
      const next = segmentWindows(state, settings, [window])
      state = next.state
      pieces.push(...next.events)
    }
    expect(pieces).toEqual(whole)
    expect(whole.map((event) => event._tag)).toEqual(["SpeechStarted", "SpeechEnded", "SpeechStarted"])
  })
})
