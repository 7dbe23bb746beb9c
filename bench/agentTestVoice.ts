/**
 * Voice-mode agent tests: the real-time factor of a simulated call. One test case whose caller
 * talks for about two minutes (12 turns of a dozen words, each answered by the agent in 15), held
 * through the real call path on the in-process line with loopback providers that answer at once
 * (LLM), in real time from the audio (the Deepgram stand-in) or as fast as eSpeak NG renders (the
 * TTS stand-in). For each speed it prints the call's own length, the wall time it took, their
 * ratio, and the dead air the simulated caller measured — the same at every speed when the timing
 * holds. Bounded: one call per speed.
 *
 *   npx tsx bench/agentTestVoice.ts                  # speeds 1, 4 and 8
 *   BENCH_SPEEDS=4 npx tsx bench/agentTestVoice.ts
 */
import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { percentile } from "../src/voice/latencyStats.ts"
import { startFakeDeepgram } from "../test/support/fakeDeepgram.ts"
import { startFakeSpeechApis } from "../test/support/fakeSpeechApis.ts"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"
import { adminKeyHeaders, call } from "./support/benchApi.ts"

const admin = { email: "bench@example.test", password: "bench-password-1" }
const SPEEDS = (process.env.BENCH_SPEEDS ?? "1,4,8").split(",").map(Number)
const TURNS = 12

const callerLine = (turn: number) =>
  `This is my question number ${turn}, about the price, the delivery and the warranty terms.`
const agentLine = "Thank you for asking, the price includes delivery within five days and a full year of warranty."

/** An OpenAI-compatible server answering at once: the agent's line streamed, the caller's turn as JSON. */
const startInstantLlm = async () => {
  const chunk = (body: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", ...body })}\n\n`
  const server = http.createServer((request, response) => {
    let text = ""
    request.on("data", (data) => (text += data))
    request.on("end", () => {
      const body = JSON.parse(text)
      if (!body.stream) {
        const schema = body.response_format?.json_schema?.name
        const said = (body.messages as Array<{ role: string }>).filter((message) => message.role === "assistant").length
        const content = schema === "simulated_caller_turn"
          ? {
            message: said + 1 < TURNS ? callerLine(said + 1) : "Thanks, that is all, goodbye.",
            hang_up: said + 1 >= TURNS
          }
          : {}
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({
          id: "c",
          object: "chat.completion",
          created: 0,
          model: "m",
          choices: [{
            index: 0,
            message: { role: "assistant", content: JSON.stringify(content) },
            finish_reason: "stop"
          }],
          usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 }
        }))
        return
      }
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write(
        chunk({ choices: [{ index: 0, delta: { role: "assistant", content: agentLine }, finish_reason: null }] })
      )
      response.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }))
      response.write(chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } }))
      response.end("data: [DONE]\n\n")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() }
}

const main = async () => {
  const [llm, deepgram, speech] = await Promise.all([startInstantLlm(), startFakeDeepgram(), startFakeSpeechApis()])
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-voice-tests-"))
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
    const auth = await adminKeyHeaders(url, admin)
    await call(url, "PUT", "/api/v1/organizations/model-configurations", auth, {
      llm: { provider: "openai", model: "m", api_key: "sk-bench", base_url: llm.baseUrl },
      stt: { provider: "deepgram", api_key: deepgram.apiKey, base_url: deepgram.url },
      tts: { provider: "elevenlabs", api_key: speech.apiKey, base_url: speech.url, voice: "bench" }
    })
    const workflow = await call(url, "POST", "/api/v1/workflow/create/definition", auth, {
      name: "Voice test bench agent",
      workflow_definition: {
        nodes: [
          {
            id: "start",
            type: "startCall",
            position: { x: 0, y: 0 },
            data: { name: "Start", greeting: "Hello, this is the bench agent. How can I help?", prompt: "Answer." }
          },
          { id: "end", type: "endCall", position: { x: 0, y: 100 }, data: { name: "End", prompt: "Say goodbye." } }
        ],
        edges: [{ id: "e", source: "start", target: "end", data: { label: "Done", condition: "The user is done" } }]
      }
    })
    const agentId = workflow.body.id as number
    await call(url, "POST", `/api/v2/agents/${agentId}/tests`, auth, {
      name: "Two-minute caller",
      persona: "A caller with many questions",
      max_turns: TURNS,
      expectations: { nodes_not_visited: ["end"], no_loop: false }
    })

    console.log(`one simulated call per speed, ${TURNS} caller turns; instant LLM, loopback Deepgram and eSpeak TTS`)
    for (const speed of SPEEDS) {
      const lines = Array.from(
        { length: TURNS },
        (_, index) => index + 1 < TURNS ? callerLine(index + 1) : "Thanks, that is all, goodbye."
      )
      deepgram.scriptNewStreams([lines])
      const started = performance.now()
      const run = await call(url, "POST", `/api/v2/agents/${agentId}/test-runs`, auth, {
        mode: "voice",
        voice_speed: speed,
        concurrency: 1
      })
      if (run.status !== 202) throw new Error(`test run refused: ${run.status} ${JSON.stringify(run.body)}`)
      let result: any
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        const read = await call(url, "GET", `/api/v2/agents/${agentId}/test-runs/${run.body.data.id}`, auth)
        if (read.body.data.status === "completed" || read.body.data.status === "failed") {
          result = read.body.data
          break
        }
      }
      const wallS = (performance.now() - started) / 1000
      const conversation = result.cases[0]?.conversations[0]
      const stored = await call(url, "GET", `/api/v2/conversations/${conversation.conversation_id}`, auth)
      const callS = Number(stored.body.data.duration_seconds ?? NaN)
      const deadAir = [...(conversation.dead_air_ms ?? [])].sort((a: number, b: number) => a - b)
      console.log(
        `speed ${speed}: call ${callS.toFixed(0)} s in ${wallS.toFixed(1)} s wall → real-time factor ${
          (wallS / callS).toFixed(2)
        }; ${conversation.caller_turns} caller turns, ${conversation.error ?? "no error"}, ${
          conversation.passed ? "passed" : "failed"
        }; dead air p50 ${percentile(deadAir, 0.5)} ms, max ${deadAir.at(-1)} ms`
      )
    }
  } finally {
    await stop(proc)
    llm.close()
    await Promise.all([deepgram.close(), speech.close()])
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
