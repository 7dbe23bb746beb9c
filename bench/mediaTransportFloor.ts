/**
 * The floor under voice capacity on this machine: what a server spends per call-second on a browser
 * call's media transport alone, with no framework and no voice work. Each call sends 16 kHz PCM in
 * 640-byte frames every 20 ms; the server sums each frame's energy (the least a voice-activity gate
 * does), forwards it when audible to a speech-to-text socket of its own, and sends 20 ms of agent audio back
 * every 20 ms half of the time (one second speaking, one silent). Everything runs on loopback: the
 * server in a child process, the callers and the speech-to-text sink in this one.
 *
 * bench/voiceCalls.ts measures talkgraph doing the whole call; this measures what no implementation
 * in Node can avoid, so the two together say how much of a call-second is talkgraph's own.
 *
 *   npx tsx bench/mediaTransportFloor.ts                  # 60 and 200 calls, 20 s each
 *   BENCH_CALLS=200 BENCH_SECONDS=30 npx tsx bench/mediaTransportFloor.ts
 */
import { spawn } from "node:child_process"
import { performance } from "node:perf_hooks"
import { type AddressInfo, WebSocket, WebSocketServer } from "ws"
import { type Figure, reportFigures } from "./support/figures.ts"
import { cpuMs } from "./support/processCpu.ts"

const FRAME_BYTES = 640
const FRAME_MS = 20
/** About -50 dBFS: quieter frames are not worth a speech-to-text service's time. */
const AUDIBLE_MEAN_SQUARE = 100 ** 2

const serve = (speechToTextUrl: string) => {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 })
  server.on("listening", () => console.log(`listening ${(server.address() as AddressInfo).port}`))
  server.on("connection", (caller) => {
    const speechToText = new WebSocket(speechToTextUrl)
    const agentAudio = Buffer.alloc(FRAME_BYTES)
    let speaking = false
    const turns = setInterval(() => speaking = !speaking, 1000)
    const playout = setInterval(() => {
      if (speaking && caller.readyState === WebSocket.OPEN) caller.send(agentAudio)
    }, FRAME_MS)
    caller.on("message", (data: Buffer, isBinary) => {
      if (!isBinary) return
      const pcm = new Int16Array(data.buffer, data.byteOffset, data.length >> 1)
      let energy = 0
      for (const sample of pcm) energy += sample * sample
      const audible = energy / pcm.length >= AUDIBLE_MEAN_SQUARE
      if (audible && speechToText.readyState === WebSocket.OPEN) speechToText.send(data)
    })
    caller.on("close", () => {
      clearInterval(turns)
      clearInterval(playout)
      speechToText.close()
    })
  })
}

const listening = (server: WebSocketServer) => new Promise<void>((resolve) => server.once("listening", resolve))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Level {
  readonly calls: number
  readonly serverMs: number
  readonly callersMs: number
  readonly framesLost: number
}

const runLevel = async (calls: number, seconds: number): Promise<Level> => {
  const sink = new WebSocketServer({ host: "127.0.0.1", port: 0 })
  await listening(sink)
  let forwarded = 0
  sink.on("connection", (socket) => socket.on("message", () => forwarded++))
  const child = spawn(
    process.execPath,
    [...process.execArgv, import.meta.filename, "--serve", `ws://127.0.0.1:${(sink.address() as AddressInfo).port}`],
    { stdio: ["ignore", "pipe", "inherit"] }
  )
  try {
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk) => {
        const match = /listening (\d+)/.exec(String(chunk))
        if (match) resolve(match[1]!)
      })
      child.once("exit", (code) => reject(new Error(`the transport server exited (${code})`)))
    })
    const callers = await Promise.all(
      Array.from({ length: calls }, () =>
        new Promise<WebSocket>((resolve, reject) => {
          const socket = new WebSocket(`ws://127.0.0.1:${port}`)
          socket.once("open", () => resolve(socket))
          socket.once("error", reject)
        }))
    )
    for (const socket of callers) socket.on("message", () => undefined)
    await sleep(1000)
    const serverBefore = await cpuMs(child.pid!)
    const callersBefore = process.cpuUsage()
    const started = performance.now()
    // Every sample 0x0101 (257, about -42 dBFS): audible, so every frame is forwarded.
    const frame = Buffer.alloc(FRAME_BYTES, 1)
    let sent = 0
    // Paced against absolute deadlines, as a handset's clock is: a late tick sends what it owes.
    while (performance.now() - started < seconds * 1000) {
      const owed = Math.floor((performance.now() - started) / FRAME_MS) + 1
      for (; sent < owed; sent++) for (const socket of callers) socket.send(frame)
      await sleep(started + sent * FRAME_MS - performance.now())
    }
    const callSeconds = (calls * (performance.now() - started)) / 1000
    const serverMs = (await cpuMs(child.pid!)) - serverBefore
    const callersUsed = process.cpuUsage(callersBefore)
    await sleep(500)
    for (const socket of callers) socket.close()
    return {
      calls,
      serverMs: Math.round((10 * serverMs) / callSeconds) / 10,
      callersMs: Math.round((10 * (callersUsed.user + callersUsed.system)) / 1000 / callSeconds) / 10,
      framesLost: sent * calls - forwarded
    }
  } finally {
    child.kill()
    sink.close()
  }
}

if (process.argv[2] === "--serve") {
  serve(process.argv[3]!)
} else {
  const seconds = Number(process.env.BENCH_SECONDS ?? 20)
  const levels: Array<Level> = []
  for (const calls of (process.env.BENCH_CALLS ?? "60,200").split(",").map(Number)) {
    levels.push(await runLevel(calls, seconds))
  }
  reportFigures(
    "media transport floor (no framework, no voice work)",
    "no database",
    levels.flatMap((level): Array<Figure> => [
      { name: `${level.calls} calls: server CPU per call-second`, value: level.serverMs, unit: "ms" },
      { name: `${level.calls} calls: callers + sink, CPU per call-second`, value: level.callersMs, unit: "ms" },
      { name: `${level.calls} calls: frames not forwarded`, value: level.framesLost, unit: "", target: "<= 0" }
    ])
  )
}
