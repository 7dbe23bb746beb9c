/**
 * Silero VAD throughput: how many calls' audio one process can score at real time, and what that
 * does to the event loop that also carries the calls' media.
 *
 * Part 1, per-window cost: one window alone and in batches (onnxruntime-node, 1 thread, this thread).
 * Part 2, N concurrent detectors fed 20 ms frames of speech and silence at real time (each call at
 * its own phase, as media arrives from the network), through the real VoiceActivity layer, with
 * inference on one worker thread (the default) and on the event loop itself (TALKGRAPH_VAD_WORKERS=0).
 * Reported: windows scored per second (and the real-time demand), CPU of the whole process as a
 * share of one core (all threads, and the main thread alone), how busy the event loop was (wall
 * time, so it also counts preemption on a shared machine), push-to-answer latency, and event-loop lag p99 (monitorEventLoopDelay).
 *
 *   npx tsx bench/vadThroughput.ts
 *   BENCH_CALLS=25,50,100,200 BENCH_SECONDS=10 BENCH_RATE=8000 npx tsx bench/vadThroughput.ts
 *
 * The machine is shared (2 cores): figures taken while other work runs are upper bounds on cost.
 */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { readFileSync } from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { sileroModelPath } from "../layers/voice/speech/sileroEngine.ts"
import { openSileroSession } from "../layers/voice/speech/sileroSession.mjs"
import { VoiceActivityLive } from "../layers/voice/speech/voiceActivity.ts"
import { VoiceActivity, type VoiceSampleRate } from "../services/VoiceActivity.ts"
import { speak } from "../test/support/speechAudio.ts"

const CALLS = (process.env.BENCH_CALLS ?? "1,50,100,200").split(",").map(Number)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const RATE = Number(process.env.BENCH_RATE ?? 8000) as VoiceSampleRate
const ENGINES = (process.env.BENCH_WORKERS ?? "1,0").split(",").map(Number)

/**
 * CPU seconds of the main thread (the event loop) from Linux's per-thread accounting: on a shared
 * machine wall-clock business (event-loop utilization) also counts time the thread was preempted.
 */
const mainThreadCpuSeconds = () => {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const percentile = (values: Array<number>, p: number) => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const perWindowCost = async () => {
  const session = await openSileroSession(sileroModelPath())
  const rows: Array<string> = []
  for (
    const [rate, length] of [
      [8000, 256 + 32],
      [16000, 512 + 64]
    ] as const
  ) {
    for (const size of [1, 8, 32, 64]) {
      const input = Float32Array.from({ length: size * length }, (_, i) => Math.sin(i / 7) * 0.1)
      let state = new Float32Array(size * 256)
      for (let i = 0; i < 20; i++) state = new Float32Array((await session.run({ rate, size, input, state })).state)
      const runs = Math.max(50, Math.round(2000 / size))
      const started = performance.now()
      for (let i = 0; i < runs; i++) state = new Float32Array((await session.run({ rate, size, input, state })).state)
      const perWindowUs = ((performance.now() - started) * 1000) / (runs * size)
      rows.push(`  ${rate} Hz, batch ${String(size).padStart(2)}: ${perWindowUs.toFixed(0).padStart(4)} µs/window`)
    }
  }
  await session.close()
  return rows
}

/** A loop of speech then silence, so detectors see both (and segment events are produced). */
const callAudio = async () => {
  const speech = await speak("Yes, I am interested. Could you tell me more about the price?", RATE)
  const audio = new Int16Array(speech.length + RATE * 2)
  audio.set(speech)
  return audio
}

const runCalls = async (workers: number, calls: number, audio: Int16Array) => {
  const layer = VoiceActivityLive.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["TALKGRAPH_VAD_WORKERS", `${workers}`]]))))
  )
  const runtime = ManagedRuntime.make(layer)
  const detectors = await Promise.all(
    Array.from({ length: calls }, () => runtime.runPromise(Effect.flatMap(VoiceActivity, (vad) => vad.detector(RATE))))
  )
  const frame = RATE / 50
  const latencies: Array<number> = []
  let windowsAnswered = 0
  let events = 0
  const lag = monitorEventLoopDelay({ resolution: 1 })
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  const mainBefore = mainThreadCpuSeconds()
  const utilizationBefore = performance.eventLoopUtilization()
  const inFlight = new Set<Promise<unknown>>()
  const state = detectors.map((detector, i) => ({
    detector,
    nextDue: started + ((i * 20) / calls),
    offset: (i * 997 * frame) % audio.length
  }))
  lag.enable()
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now()
      for (const call of state) {
        while (call.nextDue <= now) {
          const start = call.offset
          call.offset = (call.offset + frame) % (audio.length - frame)
          call.nextDue += 20
          const pushed = performance.now()
          const answer = runtime.runPromise(call.detector.push(audio.subarray(start, start + frame))).then((found) => {
            latencies.push(performance.now() - pushed)
            events += found.length
          })
          inFlight.add(answer)
          void answer.finally(() => inFlight.delete(answer))
          windowsAnswered += frame / (RATE === 8000 ? 256 : 512)
        }
      }
      if (now - started >= SECONDS * 1000) done()
      else setTimeout(tick, 5)
    }
    tick()
  })
  lag.disable()
  const wallMs = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  const mainShare = (mainThreadCpuSeconds() - mainBefore) / (wallMs / 1000)
  const loopBusy = performance.eventLoopUtilization(utilizationBefore).utilization
  await Promise.all(inFlight)
  await runtime.dispose()
  const cpuShare = (cpu.user + cpu.system) / 1000 / wallMs
  return [
    `  ${workers === 0 ? "event loop " : `${workers} worker${workers > 1 ? "s" : " "} `}` +
    ` calls ${String(calls).padStart(3)}: ${(windowsAnswered / (wallMs / 1000)).toFixed(0).padStart(5)} windows/s fed` +
    ` (demand ${((calls * RATE) / (RATE === 8000 ? 256 : 512)).toFixed(0)}),` +
    ` CPU ${(cpuShare * 100).toFixed(0)}% of a core (${((cpuShare * 100) / calls).toFixed(2)}%/call; main thread ${
      (mainShare * 100).toFixed(0)
    }%), event loop busy ${(loopBusy * 100).toFixed(0)}%,` +
    ` push→answer p50 ${percentile(latencies, 50).toFixed(1)} ms p99 ${percentile(latencies, 99).toFixed(1)} ms,` +
    ` loop lag p99 ${(lag.percentile(99) / 1e6).toFixed(1)} ms max ${(lag.max / 1e6).toFixed(1)} ms, ${events} events`
  ]
}

const main = async () => {
  console.log("Silero v5 per-window inference cost (onnxruntime-node, 1 intra-op thread, in this thread):")
  for (const row of await perWindowCost()) console.log(row)
  const audio = await callAudio()
  console.log(`\nConcurrent calls at ${RATE} Hz, 20 ms frames at real time for ${SECONDS} s each:`)
  for (const workers of ENGINES) {
    for (const calls of CALLS) for (const row of await runCalls(workers, calls, audio)) console.log(row)
  }
}

await main()
