import { describe, expect, it } from "@effect/vitest"
import { readWavLayout } from "../src/audio/wav.ts"
import { callRecorder } from "../src/voice/callRecorder.ts"
import { latencySummary, percentile } from "../src/voice/latencyStats.ts"
import { sentenceChunker } from "../src/voice/sentenceChunker.ts"
import { utteranceGate } from "../src/voice/utteranceGate.ts"

const chunk = (deltas: ReadonlyArray<string>) => {
  const chunker = sentenceChunker()
  const pieces = deltas.flatMap((delta) => chunker.push(delta))
  return [...pieces, ...chunker.flush()]
}

describe("sentence chunker", () => {
  it("sends a long first clause early, then whole sentences", () => {
    expect(
      chunk([
        "Thanks for calling Acme Dental, ",
        "this is Ava. How can ",
        "I help you today? ",
        "We are open until five."
      ])
    ).toEqual([
      "Thanks for calling Acme Dental,",
      "this is Ava.",
      "How can I help you today?",
      "We are open until five."
    ])
  })

  it("does not split decimals, abbreviations or initials", () => {
    expect(chunk(["Dr. Smith charges 3.5 dollars per minute, e.g. for J. Doe. ", "That is all."])).toEqual([
      "Dr. Smith charges 3.5 dollars per minute,",
      "e.g. for J. Doe.",
      "That is all."
    ])
  })

  it("keeps a short first sentence whole and waits for text that may continue", () => {
    const chunker = sentenceChunker()
    expect(chunker.push("Hi! I")).toEqual(["Hi!"])
    expect(chunker.push(" am calling about")).toEqual([])
    expect(chunker.push(" your appointment.")).toEqual([])
    expect(chunker.flush()).toEqual(["I am calling about your appointment."])
  })

  it("ends sentences after closing quotes, joining a very short one to the next", () => {
    expect(chunk(["She said \"Really?\" and left. ", "Okay"])).toEqual(["She said \"Really?\"", "and left. Okay"])
  })

  it("flushes nothing for an empty reply and starts fresh after a flush", () => {
    const chunker = sentenceChunker()
    expect(chunker.flush()).toEqual([])
    chunker.push("Hello there, this is a long opening clause, really")
    chunker.flush()
    expect(chunker.push("Hello again, this is another long opening, ")).toEqual([
      "Hello again, this is another long opening,"
    ])
  })
})

describe("latency percentiles", () => {
  it("uses nearest rank", () => {
    expect(percentile([300, 100, 200], 0.5)).toBe(200)
    expect(percentile([10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 0.9)).toBe(90)
    expect(percentile([], 0.5)).toBeNull()
    expect(latencySummary([420.4])).toEqual({ p50_ms: 420, p90_ms: 420, turns: 1 })
  })
})

describe("call recorder", () => {
  it("lays the caller left and the agent right on one clock", () => {
    const recorder = callRecorder(8000)
    recorder.caller(new Int16Array(8000).fill(100))
    recorder.agent(new Int16Array(800).fill(-200), 500)
    recorder.caller(new Int16Array(4000).fill(300))
    const wav = recorder.toWav()
    const layout = readWavLayout(wav)
    expect(layout).toMatchObject({ channels: 2, sampleRate: 8000, frames: 12000 })
    const view = new DataView(wav.buffer)
    const frame = (index: number) => [view.getInt16(44 + index * 4, true), view.getInt16(46 + index * 4, true)]
    expect(frame(0)).toEqual([100, 0])
    expect(frame(4000)).toEqual([100, -200])
    expect(frame(4799)).toEqual([100, -200])
    expect(frame(4800)).toEqual([100, 0])
    expect(frame(9000)).toEqual([300, 0])
    expect(recorder.durationMs()).toBe(1500)
  })

  it("never writes agent audio over agent audio already placed", () => {
    const recorder = callRecorder(8000)
    recorder.agent(new Int16Array(160).fill(1), 0)
    recorder.agent(new Int16Array(160).fill(2), 0)
    const view = new DataView(recorder.toWav().buffer)
    expect(view.getInt16(46, true)).toBe(1)
    expect(view.getInt16(46 + 160 * 4, true)).toBe(2)
  })
})

describe("audio sent to speech-to-text", () => {
  type Event = { readonly _tag: "SpeechStarted"; readonly atMs: number } | {
    readonly _tag: "SpeechPaused" | "SpeechResumed" | "SpeechEnded"
  }
  /** 20 ms frames at 8 kHz, each numbered in its first sample; the events each frame completed, by index. */
  const run = (frames: number, events: Readonly<Record<number, ReadonlyArray<Event>>>) => {
    const gate = utteranceGate(8000, { preRollMs: 100 })
    const sent: Array<number> = []
    for (let index = 0; index < frames; index++) {
      const pcm = new Int16Array(160).fill(index)
      for (const out of gate.push(pcm, events[index] ?? [])) sent.push(out[0]!)
    }
    return sent
  }
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

  it("sends each utterance from a short pre-roll before its onset until voice detection's pause", () => {
    const sent = run(60, {
      // Detected at frame 12, its onset dated back to frame 10 (200 ms); paused at 20, ended at 25.
      12: [{ _tag: "SpeechStarted", atMs: 200 }],
      20: [{ _tag: "SpeechPaused" }],
      25: [{ _tag: "SpeechEnded" }],
      42: [{ _tag: "SpeechStarted", atMs: 800 }],
      47: [{ _tag: "SpeechPaused" }],
      52: [{ _tag: "SpeechEnded" }]
    })
    // 100 ms before the onset (frames 5–9), the speech up to the pause (10–19); the silence after the
    // pause and between the utterances is never sent.
    expect(sent).toEqual([...range(5, 19), ...range(35, 46)])
  })

  it("sends a pause after all when the caller goes on: the provider hears the utterance whole", () => {
    const sent = run(40, {
      10: [{ _tag: "SpeechStarted", atMs: 200 }],
      15: [{ _tag: "SpeechPaused" }],
      18: [{ _tag: "SpeechResumed" }],
      24: [{ _tag: "SpeechPaused" }],
      28: [{ _tag: "SpeechEnded" }]
    })
    expect(sent).toEqual(range(5, 23))
  })

  it("sends nothing while nobody speaks", () => {
    expect(run(200, {})).toEqual([])
  })
})
