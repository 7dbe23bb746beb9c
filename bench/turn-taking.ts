/**
 * Turn-taking: how a voice agent takes turns with callers who pause mid-sentence, say "uh-huh"
 * over it, interrupt it, or whose line carries noise, music or the agent's own voice coming back.
 * At least 50 synthesized dialogues (eSpeak NG callers) run as browser test calls against a
 * talkgraph server of its own, with loopback providers (Deepgram oracle, scripted model, speech
 * synthesis with eSpeak NG), so what is measured is talkgraph's turn-taking.
 *
 *   npx tsx bench/turn-taking.ts                 # BENCH_DIALOGUES=56, BENCH_CONCURRENCY=6
 *   BENCH_DIALOGUES=14 npx tsx bench/turn-taking.ts
 *
 * Reported (all times on the caller's own media clock, as the caller hears the agent):
 * - premature replies: agent audio that starts while a caller sentence is still being said (its pause);
 * - missed turns: a caller sentence that never became a turn answered by the agent;
 * - spurious turns: a backchannel, a noise or an echo that was answered as a turn;
 * - false interruptions: the agent's audio cleared during a backchannel, noise, music or echo
 *   (paused, even if it then resumed), over the number of such events;
 * - missed interruptions: a real interruption ("Hold on, …") the agent talked through;
 * - interruption → agent audio stop: from the caller's first word to the last agent audio heard;
 * - end of speech → first audio: from the end of a caller sentence to the agent's first audio,
 *   endpointing included;
 * - STT audio: seconds sent to speech-to-text per second of caller speech.
 * Part 2 measures the echo guard: Silero's detections on the agent's own voice coming back at
 * several levels, at the normal threshold and at the one used while the agent speaks.
 */
import { Effect, ManagedRuntime } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { VoiceActivityLive } from "../layers/voice/speech/voiceActivity.ts"
import { VoiceActivity } from "../services/VoiceActivity.ts"
import { percentile } from "../src/voice/latencyStats.ts"
import type { CalleeScript, CalleeStep } from "../test/support/calleeScript.ts"
import { speakOrSound } from "../test/support/callerSounds.ts"
import { type CalleeReport, connectCallee } from "../test/support/fakeCallee.ts"
import { type ScriptLine, startFakeDeepgram } from "../test/support/fakeDeepgram.ts"
import { startFakeSpeechApis } from "../test/support/fakeSpeechApis.ts"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"
import { reply, startScriptedLlm } from "../test/support/scriptedLlm.ts"
import { speak } from "../test/support/speechAudio.ts"

const DIALOGUES = Number(process.env.BENCH_DIALOGUES ?? 56)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 6)
const RATE = 16000
const admin = { email: "bench@example.test", password: "bench-password-1" }

/** The agent's answers: long enough to be spoken over. */
const ANSWERS = [
  "Sure. Our plans start at twenty dollars a month, and each one includes support and updates.",
  "I understand. Let me check that for you. It usually takes two or three working days to arrive.",
  "Thank you. I have noted that down, and a colleague will call you back tomorrow morning."
]
const SHORT_ANSWER = "Of course, go ahead."
const answerFor = (said: string) =>
  /hold on|wait|question|actually|sorry/i.test(said) ? SHORT_ANSWER : ANSWERS[said.length % ANSWERS.length]!

const SENTENCES = [
  "I am calling about my order.",
  "How much does the basic plan cost?",
  "Can you send me the details by email?",
  "My account number is five five two.",
  "I would like to change my address.",
  "Is there a discount for students?",
  "The delivery was late again this week.",
  "Please call me back after five."
]
const SPLIT = [
  ["I would like to know", "how long the delivery takes."],
  ["My name is Dana and", "I live in Springfield."],
  ["Could you tell me", "when the shop opens tomorrow?"],
  ["I ordered a blue jacket,", "but I got a red one."]
]
const BACKCHANNELS = ["uh-huh", "okay", "mm-hmm", "right", "yeah", "I see"]
const INTERRUPTIONS = ["Hold on, I have a question.", "Wait, that is not what I asked.", "Sorry, can I stop you there?"]

type Kind = "plain" | "pause" | "backchannel" | "interruption" | "noise" | "music" | "echo"
const KINDS: ReadonlyArray<Kind> = (process.env.BENCH_KINDS?.split(",") as Array<Kind> | undefined) ??
  ["plain", "pause", "backchannel", "interruption", "noise", "music", "echo"]

/** What the caller says as turns; events over the agent that must not (or must) stop it. */
interface Dialogue {
  readonly kind: Kind
  readonly index: number
  readonly script: CalleeScript
  /** What the Deepgram oracle answers for each stretch of speech it receives, in order. */
  readonly heard: ReadonlyArray<ScriptLine>
  /** Caller sentences that must each become one answered turn, with their parts. */
  readonly sentences: ReadonlyArray<ReadonlyArray<string>>
  /** Lines said over the agent that must not stop it (backchannels, noise, music). */
  readonly overAgent: ReadonlyArray<string>
  readonly interruptions: ReadonlyArray<string>
  readonly echo: { readonly gain: number; readonly delayMs: number } | undefined
}

const wait: CalleeStep = { waitForAgent: { quietMs: 700, timeoutMs: 20_000 } }

const dialogue = (kind: Kind, index: number): Dialogue => {
  const pick = <T>(list: ReadonlyArray<T>, offset = 0) => list[(index + offset) % list.length]!
  const first = pick(SENTENCES)
  const second = pick(SENTENCES, 3)
  const script: Array<CalleeStep> = [wait]
  const heard: Array<ScriptLine> = []
  const sentences: Array<ReadonlyArray<string>> = []
  const overAgent: Array<string> = []
  const interruptions: Array<string> = []
  const say = (text: string) => {
    script.push({ say: text })
    heard.push(text)
    sentences.push([text])
  }
  switch (kind) {
    case "plain":
      say(first)
      script.push(wait)
      say(second)
      break
    case "pause": {
      const parts = pick(SPLIT)
      script.push({ say: parts[0]! }, { silence: 250 + (index % 4) * 100 }, { say: parts[1]! })
      heard.push(parts)
      sentences.push(parts)
      script.push(wait)
      say(second)
      break
    }
    case "backchannel":
      say(first)
      for (const offset of [0, 1]) {
        const backchannel = pick(BACKCHANNELS, offset)
        script.push({ bargeIn: { afterAgentMs: 700 + offset * 1500, say: backchannel, timeoutMs: 15_000 } })
        heard.push(backchannel)
        overAgent.push(backchannel)
      }
      script.push(wait)
      say(second)
      break
    case "interruption": {
      say(first)
      const interruption = pick(INTERRUPTIONS)
      script.push({ bargeIn: { afterAgentMs: 1200 + (index % 3) * 400, say: interruption, timeoutMs: 15_000 } })
      heard.push(interruption)
      sentences.push([interruption])
      interruptions.push(interruption)
      // The reply spoken over ended after the caller began: wait for its answer to begin first.
      script.push({ silence: 3000 })
      break
    }
    case "noise":
    case "music": {
      const sound = kind === "noise"
        ? pick(["(noise 500)", "(hum 800)", "(noise 300 -24dB)"])
        : pick(["(music 1500)", "(music 2500 -30dB)"])
      script.push({ silence: 500 }, { say: sound }, { silence: 1000 })
      say(first)
      // The same sound over the agent's answer.
      script.push({ bargeIn: { afterAgentMs: 900, say: sound, timeoutMs: 15_000 } })
      overAgent.push(sound)
      script.push(wait)
      say(second)
      break
    }
    case "echo":
      say(first)
      script.push(wait)
      say(second)
      break
  }
  script.push({ waitForAgent: { quietMs: 1200, timeoutMs: 20_000 } }, { hangUp: true })
  return {
    kind,
    index,
    script,
    heard,
    sentences,
    overAgent,
    interruptions,
    echo: kind === "echo" ? { gain: [0.1, 0.2, 0.3][index % 3]!, delayMs: [40, 80, 160][index % 3]! } : undefined
  }
}

const call = async (url: string, method: string, route: string, headers: Record<string, string>, body?: unknown) => {
  const response = await fetch(`${url}${route}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const json = await response.json().catch(() => ({}))
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`)
  return json as any
}

interface Outcome {
  readonly dialogue: Dialogue
  readonly report: CalleeReport
  readonly transcript: ReadonlyArray<{ role: string; text: string; interrupted?: boolean }>
  readonly sttSeconds: number
}

interface Figures {
  sentences: number
  premature: number
  missed: number
  spurious: number
  falseEvents: number
  falseInterruptions: number
  realInterruptions: number
  missedInterruptions: number
  stopMs: Array<number>
  clearMs: Array<number>
  firstAudioMs: Array<number>
  plainFirstAudioMs: Array<number>
  callerSpeechSeconds: number
  sttSeconds: number
  timeouts: number
  byKind: Record<string, { missed: number; premature: number; spurious: number; falseInterruptions: number }>
}

const SOUND = /^\((noise|music|hum) /

const score = (outcomes: ReadonlyArray<Outcome>): Figures => {
  const figures: Figures = {
    sentences: 0,
    premature: 0,
    missed: 0,
    spurious: 0,
    falseEvents: 0,
    falseInterruptions: 0,
    realInterruptions: 0,
    missedInterruptions: 0,
    stopMs: [],
    clearMs: [],
    firstAudioMs: [],
    plainFirstAudioMs: [],
    callerSpeechSeconds: 0,
    sttSeconds: 0,
    timeouts: 0,
    byKind: {}
  }
  for (const { dialogue, report, sttSeconds, transcript } of outcomes) {
    const kind = (figures.byKind[dialogue.kind] ??= { missed: 0, premature: 0, spurious: 0, falseInterruptions: 0 })
    figures.timeouts += report.timeouts.length
    figures.sttSeconds += sttSeconds
    figures.callerSpeechSeconds += report.utterances.filter((u) => !SOUND.test(u.text) && u.endMs !== null)
      .reduce((sum, u) => sum + (u.endMs! - u.startMs) / 1000, 0)
    const burstStarts = report.agentBursts.map((burst) => burst.startMs)
    // Each sentence: its span on the caller's clock, whether it became a turn, and the answer's delay.
    const userTurns = transcript.filter((turn) => turn.role === "user").map((turn) => turn.text)
    const expectedTurns = dialogue.sentences.map((parts) => parts.join(" "))
    let cursor = 0
    for (const parts of dialogue.sentences) {
      figures.sentences++
      const firstIndex = report.utterances.findIndex((u, index) => index >= cursor && u.text === parts[0])
      if (firstIndex < 0) {
        figures.missed++
        kind.missed++
        continue
      }
      const last = report.utterances[firstIndex + parts.length - 1]!
      cursor = firstIndex + parts.length
      const span = { startMs: report.utterances[firstIndex]!.startMs, endMs: last.endMs ?? report.durationMs }
      if (parts.length > 1 && burstStarts.some((at) => at > span.startMs && at < span.endMs)) {
        figures.premature++
        kind.premature++
      }
      const text = parts.join(" ")
      const turnIndex = transcript.findIndex((turn) => turn.role === "user" && turn.text === text)
      const answered = turnIndex >= 0 && transcript[turnIndex + 1]?.role === "assistant"
      if (!answered) {
        figures.missed++
        kind.missed++
        continue
      }
      const firstAudio = burstStarts.find((at) => at >= span.endMs)
      if (firstAudio !== undefined) {
        figures.firstAudioMs.push(firstAudio - span.endMs)
        if (dialogue.kind === "plain") figures.plainFirstAudioMs.push(firstAudio - span.endMs)
      }
    }
    const spurious = userTurns.filter((text) => !expectedTurns.includes(text)).length
    figures.spurious += spurious
    kind.spurious += spurious
    // Events that must not stop the agent: each backchannel or sound said over it, and each answer heard with echo.
    const falseWindows: Array<{ startMs: number; endMs: number }> = []
    for (const bargeIn of report.bargeIns) {
      const utterance = report.utterances.find((u) => u.startMs === bargeIn.speechStartMs)
      const endMs = (utterance?.endMs ?? bargeIn.speechStartMs) + 2000
      if (dialogue.interruptions.includes(bargeIn.text)) {
        figures.realInterruptions++
        if (bargeIn.clearAtMs === null) figures.missedInterruptions++
        else {
          figures.clearMs.push(bargeIn.clearAtMs - bargeIn.speechStartMs)
          if (bargeIn.agentStoppedAtMs !== null) figures.stopMs.push(bargeIn.agentStoppedAtMs - bargeIn.speechStartMs)
        }
      } else if (dialogue.overAgent.includes(bargeIn.text)) {
        falseWindows.push({ startMs: bargeIn.speechStartMs, endMs })
      }
    }
    if (dialogue.echo !== undefined) {
      // Every answer after the greeting is heard with its own echo coming back: any clear is false.
      figures.falseEvents += Math.max(0, report.agentBursts.length - 1)
      figures.falseInterruptions += report.clears.length
      kind.falseInterruptions += report.clears.length
    }
    for (const window of falseWindows) {
      figures.falseEvents++
      if (report.clears.some((clear) => clear.atMs >= window.startMs && clear.atMs <= window.endMs)) {
        figures.falseInterruptions++
        kind.falseInterruptions++
      }
    }
  }
  return figures
}

const pct = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((1000 * part) / whole) / 10)

/** Silero on the agent's own voice coming back (echo), and on a caller's, at both thresholds. */
const echoGuardMeasurement = async () => {
  const runtime = ManagedRuntime.make(VoiceActivityLive)
  const agentVoice = await Promise.all(ANSWERS.map((text) => speak(text, 8000)))
  const callerVoice = await Promise.all(SENTENCES.slice(0, 4).map((text) => speak(text, 8000)))
  const detections = (clips: ReadonlyArray<Int16Array>, gain: number, threshold: number) =>
    runtime.runPromise(Effect.gen(function*() {
      const vad = yield* VoiceActivity
      let speechMs = 0
      let detected = 0
      for (const clip of clips) {
        const detector = yield* vad.detector(8000, { threshold, minSpeechMs: 64, minSilenceMs: 200 })
        const scaled = Int16Array.from(clip, (sample) => Math.round(sample * gain))
        const padded = new Int16Array(scaled.length + 8000)
        padded.set(scaled)
        let found = false
        for (let at = 0; at < padded.length; at += 160) {
          for (const event of yield* detector.push(padded.subarray(at, at + 160))) {
            if (event._tag === "SpeechStarted") found = true
            if (event._tag === "SpeechEnded") speechMs += event.speechMs
          }
        }
        if (found) detected++
      }
      return { clips: clips.length, detected, speech_ms: Math.round(speechMs) }
    }))
  const rows: Array<Record<string, unknown>> = []
  for (const gain of [0.05, 0.1, 0.2, 0.3, 0.5]) {
    rows.push({
      echo_gain: gain,
      echo_level_db: Math.round(20 * Math.log10(gain)),
      at_threshold_0_5: await detections(agentVoice, gain, 0.5),
      at_threshold_0_75: await detections(agentVoice, gain, 0.75)
    })
  }
  const caller = {
    at_threshold_0_5: await detections(callerVoice, 1, 0.5),
    at_threshold_0_75: await detections(callerVoice, 1, 0.75),
    quiet_caller_minus_20db_at_0_75: await detections(callerVoice, 0.1, 0.75)
  }
  await runtime.dispose()
  return { echo: rows, caller }
}

const main = async () => {
  const dialogues = Array.from({ length: DIALOGUES }, (_, index) => dialogue(KINDS[index % KINDS.length]!, index))
  // Render every line before any call's real-time clock starts.
  for (
    const line of new Set(
      dialogues.flatMap((d) => d.script.flatMap((s) => "say" in s ? [s.say] : "bargeIn" in s ? [s.bargeIn.say] : []))
    )
  ) {
    await speakOrSound(line, RATE)
  }
  for (const text of [...ANSWERS, SHORT_ANSWER, "Hello, this is the bench agent. How can I help?"]) {
    for (const sentence of text.match(/[^.?!]+[.?!]/g) ?? [text]) await speak(sentence.trim(), RATE)
  }
  const [deepgram, speech, llm] = await Promise.all([
    startFakeDeepgram(),
    startFakeSpeechApis({ firstByteDelayMs: 0 }),
    startScriptedLlm({
      answer: (request) => reply.content(answerFor(String(request.messages?.at(-1)?.content ?? "")))
    })
  ])
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-turns-"))
  const port = String(await freePort())
  const url = `http://127.0.0.1:${port}`
  const proc = spawnTalkgraph(["serve"], {
    PORT: port,
    TALKGRAPH_DATA_DIR: dataDir,
    TALKGRAPH_ADMIN_EMAIL: admin.email,
    TALKGRAPH_ADMIN_PASSWORD: admin.password
  })
  try {
    await waitUntilServing(proc, url, 120_000)
    const login = await call(url, "POST", "/api/v1/auth/login", {}, admin)
    const auth = { authorization: `Bearer ${login.token}` }
    await call(url, "PUT", "/api/v1/organizations/model-configurations", auth, {
      llm: { provider: "openai", model: "m", api_key: "sk-bench", base_url: llm.baseUrl },
      stt: { provider: "deepgram", api_key: deepgram.apiKey, base_url: deepgram.url },
      tts: { provider: "elevenlabs", api_key: speech.apiKey, base_url: speech.url, voice: "bench" }
    })
    const node = (id: string, type: string, data: Record<string, unknown>) => ({
      id,
      type,
      position: { x: 0, y: 0 },
      data
    })
    const workflow = await call(url, "POST", "/api/v1/workflow/create/definition", auth, {
      name: "Turn-taking bench",
      workflow_definition: {
        nodes: [
          node("start", "startCall", {
            name: "Start",
            greeting: "Hello, this is the bench agent. How can I help?",
            prompt: "Answer briefly.",
            allow_interrupt: true
          }),
          node("end", "endCall", { name: "End", prompt: "Say goodbye." })
        ],
        edges: [{ id: "e", source: "start", target: "end", data: { label: "Done", condition: "Never" } }]
      }
    })
    const apiKey = (await call(url, "POST", "/api/v1/user/api-keys", auth, { name: "bench" })).api_key as string
    const started = Date.now()
    const outcomes: Array<Outcome> = []
    const queue = [...dialogues]
    await Promise.all(Array.from({ length: CONCURRENCY }, async (_, lane) => {
      await new Promise((resolve) => setTimeout(resolve, lane * 700))
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const browser = await call(url, "POST", `/api/v1/workflow/${workflow.id}/browser-calls`, auth, {})
        deepgram.script(`talkgraph-run-${browser.workflow_run_id}`, next.heard)
        const callee = await connectCallee({
          url: browser.media_url,
          provider: "browser",
          script: next.script,
          speak: speakOrSound,
          ...(next.echo ? { echo: next.echo } : {})
        })
        const report = await callee.done
        const runId = browser.workflow_run_id as number
        let conversation: any
        for (let attempt = 0; attempt < 100; attempt++) {
          conversation = (await call(url, "GET", `/api/v2/conversations/${runId}`, { "x-api-key": apiKey })).data
          if (conversation.ended_at !== null) break
          await new Promise((resolve) => setTimeout(resolve, 200))
        }
        outcomes.push({
          dialogue: next,
          report,
          transcript: conversation.transcript,
          sttSeconds: conversation.usage?.stt_seconds ?? 0
        })
        if (process.env.BENCH_DEBUG) {
          process.stderr.write(`${
            JSON.stringify({
              kind: next.kind,
              transcript: conversation.transcript.map((t: any) => [t.role, t.text, t.interrupted ?? false]),
              utterances: report.utterances,
              bursts: report.agentBursts,
              clears: report.clears.length,
              stt: conversation.usage?.stt_seconds
            })
          }\n`)
        }
        process.stderr.write(".")
      }
    }))
    process.stderr.write("\n")
    const figures = score(outcomes)
    const echo = await echoGuardMeasurement()
    console.log(JSON.stringify(
      {
        dialogues: outcomes.length,
        kinds: Object.fromEntries(KINDS.map((kind) => [kind, outcomes.filter((o) => o.dialogue.kind === kind).length])),
        wall_seconds: Math.round((Date.now() - started) / 1000),
        caller_sentences: figures.sentences,
        premature_replies: figures.premature,
        missed_turns: figures.missed,
        spurious_turns: figures.spurious,
        false_interruptions: {
          events: figures.falseEvents,
          count: figures.falseInterruptions,
          percent: pct(figures.falseInterruptions, figures.falseEvents)
        },
        missed_interruptions: {
          interruptions: figures.realInterruptions,
          count: figures.missedInterruptions,
          percent: pct(figures.missedInterruptions, figures.realInterruptions)
        },
        interruption_to_agent_audio_stop_ms: {
          p50: percentile(figures.stopMs, 0.5),
          p95: percentile(figures.stopMs, 0.95)
        },
        interruption_to_clear_ms: { p50: percentile(figures.clearMs, 0.5), p95: percentile(figures.clearMs, 0.95) },
        end_of_speech_to_first_audio_ms: {
          all: { p50: percentile(figures.firstAudioMs, 0.5), p95: percentile(figures.firstAudioMs, 0.95) },
          plain: { p50: percentile(figures.plainFirstAudioMs, 0.5), p95: percentile(figures.plainFirstAudioMs, 0.95) }
        },
        stt_seconds_per_caller_speech_second: Math.round((100 * figures.sttSeconds) / figures.callerSpeechSeconds) /
          100,
        caller_waits_that_timed_out: figures.timeouts,
        by_kind: figures.byKind,
        echo_guard: echo
      },
      null,
      2
    ))
  } catch (error) {
    process.stderr.write(`\nThe server's last output:\n${proc.output().slice(-4000)}\n`)
    throw error
  } finally {
    await stop(proc)
    await Promise.all([deepgram.close(), speech.close(), llm.close()])
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
