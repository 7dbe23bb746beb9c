/**
 * Voice pipeline: simultaneous calls one talkgraph process sustains at real time, and the
 * pipeline's overhead from the end of the caller's speech to the first agent audio frame beyond the
 * end-of-turn silence. Stand-ins answer instantly (scripted LLM, Deepgram oracle, TTS), so what is
 * measured is talkgraph. The server is its own process; callers are browser test calls driven by
 * the loopback callee in this process, each saying three lines and waiting for the answers.
 *
 *   npx tsx bench/voiceCalls.ts                  # BENCH_CALLS=50 by default
 *   BENCH_CALLS=25 DATABASE_URL=postgres://… npx tsx bench/voiceCalls.ts
 *
 * Underruns: agent audio that arrives at the callee after what was queued before it had finished
 * playing, in the middle of an utterance (a gap the caller would hear).
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { percentile } from "../src/voice/latencyStats.ts"
import { defaultTurnTakingSettings } from "../src/voice/turnTaking/settings.ts"
import { type CalleeReport, connectCallee } from "../test/support/fakeCallee.ts"
import { startFakeDeepgram } from "../test/support/fakeDeepgram.ts"
import { startFakeSpeechApis } from "../test/support/fakeSpeechApis.ts"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"
import { reply, startScriptedLlm } from "../test/support/scriptedLlm.ts"

const CALLS = Number(process.env.BENCH_CALLS ?? 50)
const LINES = ["Yes, I would like to hear more.", "How much does it cost per month?", "Thanks, that is all for now."]
const admin = { email: "bench@example.test", password: "bench-password-1" }

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

/** Mid-utterance gaps: a message that arrived after the audio queued before it had run out. */
const underruns = (report: CalleeReport) => {
  let playedUntil = 0
  let count = 0
  for (const media of report.agentMedia) {
    if (playedUntil > 0 && media.atMs > playedUntil && media.atMs - playedUntil < 300) count++
    playedUntil = Math.max(playedUntil, media.atMs) + (media.samples * 1000) / report.sampleRate
  }
  return count
}

const main = async () => {
  const [deepgram, speech, llm] = await Promise.all([
    startFakeDeepgram(),
    startFakeSpeechApis({ audio: "tone", firstByteDelayMs: 0, chunkIntervalMs: 0 }),
    startScriptedLlm({ sameAnswerWithinMs: 2000 })
  ])
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-voice-"))
  const lagFile = path.join(dataDir, "loop-lag.json")
  const databaseUrl = process.env.DATABASE_URL
  const port = String(await freePort())
  const url = `http://127.0.0.1:${port}`
  process.env.TALKGRAPH_NODE_ARGS = `${process.env.TALKGRAPH_NODE_ARGS ?? ""} --import ${
    path.resolve(import.meta.dirname, "support/loopLag.mjs")
  }`
  const proc = spawnTalkgraph(["serve"], {
    PORT: port,
    TALKGRAPH_DATA_DIR: dataDir,
    TALKGRAPH_ADMIN_EMAIL: admin.email,
    TALKGRAPH_ADMIN_PASSWORD: admin.password,
    BENCH_LOOP_LAG_FILE: lagFile,
    ...(databaseUrl
      ? { DATABASE_URL: databaseUrl, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123" }
      : {})
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
      name: "Voice bench",
      workflow_definition: {
        nodes: [
          node("start", "startCall", {
            name: "Start",
            greeting: "Hello, this is the bench agent.",
            prompt: "Answer briefly."
          }),
          node("end", "endCall", { name: "End", prompt: "Say goodbye." })
        ],
        edges: [{ id: "e", source: "start", target: "end", data: { label: "Done", condition: "The caller is done" } }]
      }
    })
    llm.enqueue(
      ...Array.from({ length: CALLS * LINES.length }, () => reply.content("Sure. It is twenty dollars a month."))
    )
    const script = LINES.flatMap((line) => [{ waitForAgent: { quietMs: 600 } }, { say: line }]).concat(
      [{ waitForAgent: { quietMs: 600 } }, { hangUp: true }] as any
    )
    const started = Date.now()
    const calls = await Promise.all(Array.from({ length: CALLS }, async (_, index) => {
      // Staggered like real traffic: the callee side renders its lines first, then dials.
      await new Promise((resolve) => setTimeout(resolve, (index * 5000) / CALLS))
      const browser = await call(url, "POST", `/api/v1/workflow/${workflow.id}/browser-calls`, auth, {})
      deepgram.script(`talkgraph-run-${browser.workflow_run_id}`, LINES)
      const callee = await connectCallee({ url: browser.media_url, provider: "browser", script: script as any })
      return { runId: browser.workflow_run_id as number, report: await callee.done }
    }))
    const wallSeconds = (Date.now() - started) / 1000
    const lag = JSON.parse(await fs.readFile(lagFile, "utf8"))

    const serverLatencies: Array<number> = []
    for (const { runId } of calls) {
      const conversation = await call(url, "GET", `/api/v2/conversations/${runId}`, {
        "x-api-key": (await apiKey(url, auth))
      })
      for (const turn of conversation.data.transcript) {
        if (typeof turn.latency_ms === "number") {
          serverLatencies.push(turn.latency_ms - defaultTurnTakingSettings.endpointingMs)
        }
      }
    }
    const answered = calls.reduce(
      (sum, { report }) => sum + report.utterances.filter((u) => u.endMs !== null).length,
      0
    )
    const timeouts = calls.reduce((sum, { report }) => sum + report.timeouts.length, 0)
    const gaps = calls.reduce((sum, { report }) => sum + underruns(report), 0)
    console.log(JSON.stringify(
      {
        calls: CALLS,
        database: databaseUrl ? "postgresql" : "pglite",
        wall_seconds: Math.round(wallSeconds),
        caller_lines: answered,
        agent_turns_measured: serverLatencies.length,
        unanswered_waits: timeouts,
        overhead_beyond_end_of_turn_ms: {
          p50: percentile(serverLatencies, 0.5),
          p99: percentile(serverLatencies, 0.99)
        },
        end_of_turn_silence_ms: defaultTurnTakingSettings.endpointingMs,
        underruns: gaps,
        server_event_loop_lag_ms: lag
      },
      null,
      2
    ))
  } finally {
    await stop(proc)
    await Promise.all([deepgram.close(), speech.close(), llm.close()])
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

let key: string | undefined
const apiKey = async (
  url: string,
  auth: Record<string, string>
) => (key ??= (await call(url, "POST", "/api/v1/user/api-keys", auth, { name: "bench" })).api_key as string)

await main()
