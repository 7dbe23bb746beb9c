/**
 * In-call answering-machine detection on a labelled set: people answering ("Hello?") and voicemail
 * greetings, spoken by eSpeak NG at 8 kHz, the greetings with and without a beep, some of each
 * under line noise. Each clip goes through what a call uses: Silero voice detection (the call's
 * settings) for the callee's speech starts and stops, and the answer detector (beep detector and
 * greeting classifier). Speech-to-text is modelled: each sentence's words arrive as a final
 * transcript 300 ms after the sentence ends (a streaming recogniser's usual finalisation delay).
 *
 *   npx tsx bench/voicemailDetection.ts
 *
 * Reported: accuracy (an undecided call goes on as a person's, so it counts as "human"), the false
 * machine rate (people taken for machines: their call would be hung up), the missed machine rate,
 * beeps heard on clips with one, and time from answer to decision (p50/p95) for people and machines.
 */
import { Effect, ManagedRuntime } from "effect"
import { VoiceActivityLive } from "../layers/voice/speech/voiceActivity.ts"
import { VoiceActivity } from "../services/VoiceActivity.ts"
import { answerDetector } from "../src/voice/answerDetector.ts"
import { beepDetector } from "../src/voice/beepDetector.ts"
import { percentile } from "../src/voice/latencyStats.ts"
import { speak } from "../test/support/speechAudio.ts"
import { type Figure, reportFigures } from "./support/figures.ts"

const RATE = 8000
const FRAME = 160
const STT_DELAY_MS = 300
const SENTENCE_GAP_MS = 250

const HUMANS: ReadonlyArray<ReadonlyArray<string>> = [
  ["Hello?"],
  ["Hi, this is Sam."],
  ["Yes?"],
  ["Hello, who is calling?"],
  ["Speaking."],
  ["Hi there."],
  ["Good morning, Dana speaking."],
  ["Hello, Miller residence."],
  ["Hey."],
  ["Yeah, hello?"],
  ["This is Maria."],
  ["Hello, can I help you?"],
  ["Hi, who's this?"],
  ["Good afternoon."],
  ["Hello, Jones speaking."],
  ["Yes, hello."],
  ["Hi!"],
  ["Hello, this is Peter."],
  ["Mm, hello?"],
  ["Hello?", "Hello, anyone there?"],
  ["Yes, speaking."],
  ["Hi, it's Chris."]
]

const MACHINES: ReadonlyArray<ReadonlyArray<string>> = [
  ["Hi, you've reached Dana.", "Please leave a message after the tone."],
  ["The person you are calling is not available.", "Please record your message after the tone."],
  [
    "Hello, this is Mark.",
    "I can't come to the phone right now.",
    "Leave your name and number and I'll call you back."
  ],
  ["You have reached the voicemail of Sarah Lee.", "Please leave a message."],
  ["Hi, it's Tom.", "Sorry I missed you.", "Leave a message and I will get back to you."],
  ["Your call has been forwarded to an automated voice messaging system."],
  ["Thanks for calling Riverside Dental.", "Our office is closed.", "Please leave a message."],
  ["Hey, this is Alex.", "I'm away from my desk right now.", "Leave a message."],
  ["The mailbox you have reached is full."],
  ["Hello, you have reached the Smith family.", "We are not available to take your call."],
  ["Hi, this is Jen.", "I'm not here right now, so leave me a message."],
  ["At the tone, please record your message.", "When you are finished, hang up."],
  ["Hi.", "You've reached Kevin.", "Leave a message."],
  ["This is Priya.", "I'll return your call as soon as I can."],
  ["Hello, you've reached 555 0142.", "Please leave a message after the beep."],
  ["Hi, Carla here.", "I can't take your call at the moment.", "Please leave a short message."],
  ["Welcome to the voicemail of Doctor Brown.", "Leave a detailed message."],
  ["Hi, this is the Garcia family.", "We're out right now, leave a message and we will call you back."],
  ["You've reached the office of Northwind Logistics.", "Our hours are nine to five, Monday through Friday."],
  ["Hello, Luis speaking.", "Just kidding, this is my voicemail.", "Leave a message."],
  ["Sorry, I'm unavailable.", "Please leave a message after the signal."],
  ["Hi, you have reached Emma.", "Please leave a message."]
]

interface Clip {
  readonly label: "human" | "machine"
  readonly sentences: ReadonlyArray<string>
  readonly beepHz: number | null
  readonly noisy: boolean
}

const silence = (ms: number) => new Int16Array((RATE * ms) / 1000)

const tone = (frequency: number, ms: number) =>
  Int16Array.from(
    { length: (RATE * ms) / 1000 },
    (_, i) => Math.round(7000 * Math.sin((2 * Math.PI * frequency * i) / RATE))
  )

/** Line noise at about -35 dBFS, seeded. */
const addNoise = (pcm: Int16Array, seed: number) => {
  let state = seed
  return Int16Array.from(pcm, (sample) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff
    return Math.max(-32768, Math.min(32767, sample + Math.round(1100 * ((state / 0x7fffffff) * 2 - 1))))
  })
}

/** The clip's audio and when each sentence's final transcript arrives. */
const render = async (clip: Clip, seed: number) => {
  const parts: Array<Int16Array> = [silence(300)]
  const finals: Array<{ atMs: number; text: string }> = []
  let at = 300
  for (const sentence of clip.sentences) {
    const pcm = await speak(sentence, RATE)
    parts.push(pcm, silence(SENTENCE_GAP_MS))
    at += (pcm.length * 1000) / RATE
    finals.push({ atMs: at + STT_DELAY_MS, text: sentence })
    at += SENTENCE_GAP_MS
  }
  const beepEndMs = clip.beepHz === null ? null : at + 400
  if (clip.beepHz !== null) parts.push(tone(clip.beepHz, 400))
  // A person waits for an answer; a machine records.
  parts.push(silence(clip.label === "human" ? 4000 : 3000))
  const audio = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0))
  let offset = 0
  for (const part of parts) {
    audio.set(part, offset)
    offset += part.length
  }
  return { audio: clip.noisy ? addNoise(audio, seed) : audio, finals, beepEndMs }
}

const clips: ReadonlyArray<Clip> = [
  ...HUMANS.map((sentences, i): Clip => ({ label: "human", sentences, beepHz: null, noisy: i % 3 === 0 })),
  ...MACHINES.map((sentences, i): Clip => ({
    label: "machine",
    sentences,
    beepHz: i % 2 === 0 ? [1000, 850, 1400, 440][(i / 2) % 4]! : null,
    noisy: i % 3 === 1
  }))
]

const main = async () => {
  const runtime = ManagedRuntime.make(VoiceActivityLive)
  const results: Array<{ clip: Clip; verdict: string; atMs: number }> = []
  /** Beep detection on whole clips, as a leave-a-message call listens after the verdict. */
  const beeps: Array<{ expectedEndMs: number | null; heard: ReadonlyArray<number> }> = []
  for (const [index, clip] of clips.entries()) {
    const { audio, beepEndMs, finals } = await render(clip, index + 1)
    const listener = beepDetector(RATE)
    const heard: Array<number> = []
    for (let start = 0; start < audio.length; start += FRAME) {
      const beep = listener.push(audio.subarray(start, start + FRAME))
      // Reported when the tone stops: the delay is from the beep's end to the report.
      if (beep !== null) heard.push(((start + FRAME) * 1000) / RATE)
    }
    beeps.push({ expectedEndMs: beepEndMs, heard })
    const vad = await runtime.runPromise(
      Effect.flatMap(
        VoiceActivity,
        (service) => service.detector(RATE, { threshold: 0.5, minSpeechMs: 64, minSilenceMs: 200 })
      )
    )
    const detector = answerDetector(RATE)
    let decision = null
    let next = 0
    for (let start = 0; start < audio.length && decision === null; start += FRAME) {
      const frame = audio.subarray(start, start + FRAME)
      const heardMs = ((start + FRAME) * 1000) / RATE
      for (const event of await runtime.runPromise(vad.push(frame))) {
        if (event._tag === "SpeechStarted") detector.speechStarted(event.atMs)
        if (event._tag === "SpeechEnded") detector.speechStopped(event.atMs)
      }
      decision = detector.audio(frame)
      while (decision === null && next < finals.length && finals[next]!.atMs <= heardMs) {
        decision = detector.transcript(finals[next++]!.text)
      }
    }
    const verdict = decision === null || decision.verdict === "undecided" ? "human" : decision.verdict
    results.push({ clip, verdict, atMs: decision?.atMs ?? audio.length / (RATE / 1000) })
    console.log(
      `${clip.label.padEnd(8)} ${clip.beepHz === null ? "       " : `beep ${String(clip.beepHz).padEnd(5)}`}${
        clip.noisy ? "noise " : "      "
      }→ ${(decision?.verdict ?? "none").padEnd(9)} at ${String(Math.round(decision?.atMs ?? 0)).padStart(5)} ms  ${
        decision?.cues.join(", ") ?? ""
      }  "${clip.sentences.join(" ")}"`
    )
  }
  await runtime.dispose()

  const humans = results.filter((result) => result.clip.label === "human")
  const machines = results.filter((result) => result.clip.label === "machine")
  const withBeep = beeps.filter((clip) => clip.expectedEndMs !== null)
  const beepDelays = withBeep.flatMap((clip) =>
    clip.heard.length === 1 && Math.abs(clip.heard[0]! - clip.expectedEndMs!) <= 150
      ? [clip.heard[0]! - clip.expectedEndMs!]
      : []
  )
  const correct = results.filter((result) => result.verdict === result.clip.label).length
  const figures: Array<Figure> = [
    { name: "clips (people / machines)", value: results.length, unit: `${humans.length}/${machines.length}` },
    { name: "accuracy", value: round((100 * correct) / results.length), unit: "%", target: ">= 90" },
    {
      name: "false machine rate (people taken for machines)",
      value: round((100 * humans.filter((result) => result.verdict === "machine").length) / humans.length),
      unit: "%",
      target: "<= 5"
    },
    {
      name: "missed machines",
      value: round((100 * machines.filter((result) => result.verdict !== "machine").length) / machines.length),
      unit: "%"
    },
    {
      name: "beeps heard, once, at the beep (clips with one)",
      value: round((100 * beepDelays.length) / withBeep.length),
      unit: "%",
      target: ">= 90"
    },
    {
      name: "false beeps (in speech and noise, all clips)",
      value: beeps.reduce((sum, clip) => sum + clip.heard.length, 0) - beepDelays.length,
      unit: "beeps",
      target: "<= 0"
    },
    { name: "beep end → beep reported, max", value: Math.round(Math.max(...beepDelays)), unit: "ms" },
    ...timeFigures("decision time, people", humans),
    ...timeFigures("decision time, machines", machines)
  ]
  reportFigures("voicemail detection", "no database", figures)
}

const round = (value: number) => Math.round(value * 10) / 10

const timeFigures = (name: string, results: ReadonlyArray<{ atMs: number }>): Array<Figure> => {
  const times = results.map((result) => result.atMs)
  return [
    { name: `${name} p50`, value: Math.round(percentile(times, 0.5) ?? Number.NaN), unit: "ms" },
    { name: `${name} p95`, value: Math.round(percentile(times, 0.95) ?? Number.NaN), unit: "ms" }
  ]
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
