import { describe, expect, it } from "vitest"
import { answerDetector } from "../src/voice/answerDetector.ts"
import { machineWatch, type MachineWatchEvent } from "../src/voice/answeringMachine.ts"
import { beepDetector } from "../src/voice/beepDetector.ts"
import { classifyGreeting } from "../src/voice/greetingClassifier.ts"

const RATE = 8000

const seeded = (seed: number) => {
  let state = seed
  return () => ((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff)
}

const tone = (frequency: number, ms: number, level = 8000) =>
  Int16Array.from(
    { length: (RATE * ms) / 1000 },
    (_, i) => Math.round(level * Math.sin((2 * Math.PI * frequency * i) / RATE))
  )

const noise = (ms: number, level: number, seed = 3) => {
  const random = seeded(seed)
  return Int16Array.from({ length: (RATE * ms) / 1000 }, () => Math.round(level * (random() * 2 - 1)))
}

/** Voiced speech: a gliding pitch with its harmonics under a formant, loudness rising and falling by syllable. */
const speechLike = (ms: number, seed: number) => {
  const random = seeded(seed)
  const out = new Int16Array((RATE * ms) / 1000)
  let phase = 0
  let envelope = 0
  let formant = 700
  for (let i = 0; i < out.length; i++) {
    if (i % 1200 === 0) {
      envelope = random() < 0.25 ? 0 : 0.3 + 0.7 * random()
      formant = 400 + 1400 * random()
    }
    const t = i / RATE
    const pitch = 120 + 40 * Math.sin(2 * Math.PI * 1.7 * t) + 15 * Math.sin(2 * Math.PI * 5.3 * t)
    phase += (2 * Math.PI * pitch) / RATE
    let sample = 0
    for (let harmonic = 1; harmonic * pitch < 3400; harmonic++) {
      const distance = (harmonic * pitch - formant) / 300
      sample += Math.exp(-distance * distance) * Math.sin(harmonic * phase) +
        0.15 * Math.sin(harmonic * phase) / harmonic
    }
    out[i] = Math.round(3000 * envelope * sample)
  }
  return out
}

const join = (...parts: ReadonlyArray<Int16Array>) => {
  const out = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

const mix = (a: Int16Array, b: Int16Array) => Int16Array.from(a, (sample, i) => sample + (b[i] ?? 0))

/** Pushes audio in 20 ms frames, as a call delivers it; returns every beep heard. */
const beepsIn = (pcm: Int16Array) => {
  const detector = beepDetector(RATE)
  const beeps = []
  for (let start = 0; start < pcm.length; start += 160) {
    const beep = detector.push(pcm.subarray(start, start + 160))
    if (beep !== null) beeps.push(beep)
  }
  return beeps
}

describe("beep detector", () => {
  it("hears a 1 kHz beep after a greeting, at its end", () => {
    const beeps = beepsIn(join(speechLike(3000, 1), noise(300, 30), tone(1000, 400), noise(800, 30)))
    expect(beeps).toHaveLength(1)
    expect(beeps[0]!.frequencyHz).toBeGreaterThanOrEqual(980)
    expect(beeps[0]!.frequencyHz).toBeLessThanOrEqual(1020)
    expect(beeps[0]!.startMs).toBeGreaterThanOrEqual(3200)
    expect(beeps[0]!.startMs).toBeLessThanOrEqual(3340)
    expect(beeps[0]!.endMs).toBeGreaterThanOrEqual(3650)
    expect(beeps[0]!.endMs).toBeLessThanOrEqual(3780)
  })

  it("hears beeps anywhere from 400 to 2000 Hz, off the grid and under line noise", () => {
    for (const frequency of [440, 697, 853, 1400, 1990]) {
      const beeps = beepsIn(join(noise(500, 400), mix(tone(frequency, 250, 6000), noise(250, 400, 9)), noise(500, 400)))
      expect(beeps.map((beep) => Math.abs(beep.frequencyHz - frequency) <= 20)).toEqual([true])
    }
  })

  it("ignores tones too short to be a beep, and tones outside the band", () => {
    expect(beepsIn(join(tone(1000, 100), noise(500, 30)))).toEqual([])
    expect(beepsIn(join(tone(200, 600), noise(500, 30)))).toEqual([])
    expect(beepsIn(join(tone(2600, 600), noise(500, 30)))).toEqual([])
  })

  it("reports a long tone once, without waiting for it to end", () => {
    const beeps = beepsIn(tone(800, 4000))
    expect(beeps).toHaveLength(1)
    expect(beeps[0]!.endMs - beeps[0]!.startMs).toBeGreaterThanOrEqual(1500)
    expect(beeps[0]!.endMs).toBeLessThan(1700)
  })

  it("hears no beep in speech, noise or silence", () => {
    for (let seed = 1; seed <= 8; seed++) expect(beepsIn(speechLike(6000, seed))).toEqual([])
    expect(beepsIn(noise(5000, 4000))).toEqual([])
    expect(beepsIn(new Int16Array(RATE * 3))).toEqual([])
  })
})

describe("greeting classifier", () => {
  it("judges a voicemail greeting a machine, with the phrases that gave it away", () => {
    const judgement = classifyGreeting({
      text: "Hi, you've reached Dana. I can't come to the phone right now, please leave a message after the tone.",
      speechMs: 5200,
      paused: false
    })
    expect(judgement.verdict).toBe("machine")
    expect(judgement.confidence).toBeGreaterThan(0.9)
    expect(judgement.cues).toEqual(expect.arrayContaining(["you have reached", "leave a message", "after the tone"]))
  })

  it("needs more than one weak sign for a machine", () => {
    expect(classifyGreeting({ text: "You have reached", speechMs: 900, paused: false }).verdict).toBe("unknown")
    expect(classifyGreeting({ text: "The mailbox is full", speechMs: 1200, paused: false }).verdict).toBe("unknown")
    expect(
      classifyGreeting({ text: "Your call has been forwarded to voicemail", speechMs: 2000, paused: false }).verdict
    )
      .toBe("machine")
  })

  it("takes a long unbroken opening for a machine even without its phrasing", () => {
    const greeting = "Thanks for calling the Riverside dental clinic our hours are nine to five Monday through Friday"
    const judgement = classifyGreeting({
      text: greeting,
      speechMs: 5000,
      paused: false
    })
    expect(judgement.verdict).toBe("machine")
    expect(judgement.cues).toEqual(["long opening monologue", "talks on without a pause"])
    expect(classifyGreeting({ text: greeting, speechMs: 2000, paused: false }).verdict).toBe("unknown")
  })

  it("judges a short greeting and a pause a person", () => {
    expect(classifyGreeting({ text: "Hello?", speechMs: 500, paused: true })).toEqual({
      verdict: "human",
      confidence: 0.85,
      cues: ["short greeting, then a pause"]
    })
    expect(classifyGreeting({ text: "Hi, this is Sam speaking.", speechMs: 1300, paused: true }).verdict).toBe("human")
  })

  it("waits while a short greeting is still going on, or when nothing has been said", () => {
    expect(classifyGreeting({ text: "Hello", speechMs: 400, paused: false }).verdict).toBe("unknown")
    expect(classifyGreeting({ text: "", speechMs: 0, paused: true }).verdict).toBe("unknown")
    expect(
      classifyGreeting({ text: "Hello, Sam here, who is this calling please", speechMs: 2500, paused: true }).verdict
    )
      .toBe("unknown")
  })
})

/** Feeds `pcm` in 20 ms frames until a decision; the frame callback may feed speech events and transcripts first. */
const decisionOf = (
  detector: ReturnType<typeof answerDetector>,
  pcm: Int16Array,
  atFrame: (ms: number) => ReturnType<ReturnType<typeof answerDetector>["transcript"]> | void = () => undefined
) => {
  for (let start = 0; start < pcm.length; start += 160) {
    const early = atFrame((start * 1000) / RATE)
    if (early) return early
    const decision = detector.audio(pcm.subarray(start, start + 160))
    if (decision !== null) return decision
  }
  return null
}

describe("answer detector", () => {
  it("decides machine at the end of the beep", () => {
    const detector = answerDetector(RATE)
    const decision = decisionOf(detector, join(noise(2000, 30), tone(1000, 300), noise(3000, 30)))
    expect(decision?.verdict).toBe("machine")
    expect(decision?.cues).toEqual(["beep"])
    expect(decision!.atMs).toBeGreaterThanOrEqual(2300)
    expect(decision!.atMs).toBeLessThanOrEqual(2400)
  })

  it("decides human once a short greeting is followed by a pause", () => {
    const detector = answerDetector(RATE, { windowMs: 8000, pauseMs: 800 })
    const decision = decisionOf(detector, join(speechLike(500, 4), noise(3000, 30)), (ms) => {
      if (ms === 100) detector.speechStarted(100)
      if (ms === 500) detector.speechStopped(500)
      if (ms === 800) return detector.transcript("Hello?")
    })
    expect(decision?.verdict).toBe("human")
    expect(decision?.atMs).toBe(1300)
  })

  it("decides machine from the words before any beep, and a long talk with short breaths counts as one", () => {
    const detector = answerDetector(RATE)
    const decision = decisionOf(detector, speechLike(6000, 5), (ms) => {
      if (ms === 0) detector.speechStarted(0)
      if (ms === 1500) detector.speechStopped(1500)
      if (ms === 1800) detector.speechStarted(1800)
      if (ms === 2000) return detector.transcript("Hi, this is the Miller family")
    })
    expect(decision?.verdict).toBe("machine")
    expect(decision?.cues).toEqual(["talks on without a pause"])
    expect(decision!.atMs).toBeGreaterThanOrEqual(3500)
    expect(decision!.atMs).toBeLessThan(3600)
  })

  it("gives up undecided at the end of its window", () => {
    const decision = decisionOf(answerDetector(RATE, { windowMs: 3000, pauseMs: 800 }), noise(5000, 30))
    expect(decision).toEqual({ verdict: "undecided", confidence: 0, atMs: 3000, cues: [], beep: null })
  })
})

/** Every event of a watch over `pcm` in 20 ms frames, with the speech events given by frame time. */
const watchEvents = (
  watch: ReturnType<typeof machineWatch>,
  pcm: Int16Array,
  atFrame: (ms: number) => ReadonlyArray<MachineWatchEvent> | void = () => undefined
) => {
  const events: Array<MachineWatchEvent> = []
  for (let start = 0; start < pcm.length; start += 160) {
    events.push(...(atFrame((start * 1000) / RATE) ?? []), ...watch.audio(pcm.subarray(start, start + 160)))
  }
  return events
}

describe("machine watch", () => {
  it("cues the message at the beep that follows a greeting judged from its words", () => {
    const watch = machineWatch(RATE, { leaveMessage: true })
    const events = watchEvents(
      watch,
      join(speechLike(2000, 6), noise(500, 30), tone(900, 300), noise(2000, 30)),
      (ms) => {
        if (ms === 0) watch.speechStarted(0)
        if (ms === 1000) return watch.transcript("You have reached the voicemail of Dana")
        if (ms === 2000) watch.speechStopped(2000)
      }
    )
    expect(events.map((event) => event._tag === "Decided" ? event.decision.verdict : event.cause)).toEqual([
      "machine",
      "beep"
    ])
    const cue = events[1] as { atMs: number }
    expect(cue.atMs).toBeGreaterThanOrEqual(2800)
    expect(cue.atMs).toBeLessThanOrEqual(2900)
  })

  it("cues the message once a greeting without a beep has been quiet a while", () => {
    const watch = machineWatch(RATE, { leaveMessage: true })
    const events = watchEvents(watch, join(speechLike(2000, 7), noise(5000, 30)), (ms) => {
      if (ms === 0) watch.speechStarted(0)
      if (ms === 1000) return watch.transcript("Please leave a message")
      if (ms === 2000) watch.speechStopped(2000)
    })
    expect(events.map((event) => event._tag === "Decided" ? event.decision.verdict : event.cause)).toEqual([
      "machine",
      "greeting_ended"
    ])
    expect((events[1] as { atMs: number }).atMs).toBe(4500)
  })

  it("cues nothing after a person, or when the machine is only to be hung up on", () => {
    const person = machineWatch(RATE, { leaveMessage: true })
    const events = watchEvents(
      person,
      join(speechLike(500, 8), noise(2000, 30), tone(1000, 300), noise(500, 30)),
      (ms) => {
        if (ms === 0) person.speechStarted(0)
        if (ms === 500) person.speechStopped(500)
        if (ms === 600) return person.transcript("Hello?")
      }
    )
    expect(events.map((event) => event._tag)).toEqual(["Decided"])
    const hangUp = machineWatch(RATE, { leaveMessage: false })
    expect(watchEvents(hangUp, join(noise(1000, 30), tone(1000, 300), noise(3000, 30))).map((event) => event._tag))
      .toEqual(["Decided"])
  })
})
