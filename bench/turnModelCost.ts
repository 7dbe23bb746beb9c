/**
 * What one end-of-turn prediction costs the event loop besides the model itself: smart-turn's
 * input features (resampling, normalisation, the Whisper log-mel of 8 s) for 8 and 16 kHz calls,
 * then a whole prediction through the TurnModel layer with the stand-in model of smart-turn's
 * shape (test/support/standInTurnModel.ts). The real model's inference (a Whisper-tiny encoder) is
 * not measured: its weights are not here.
 *
 *   npx tsx bench/turnModelCost.ts
 *
 * The machine is shared (2 cores): figures taken while other work runs are upper bounds on cost.
 */
import { ConfigProvider, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TurnModelLive } from "../layers/voice/speech/turnModel.ts"
import { TurnModel } from "../services/TurnModel.ts"
import { smartTurnFeatures } from "../src/voice/smartTurnInput.ts"
import { standInTurnModel } from "../test/support/standInTurnModel.ts"

const RUNS = 30

const speech = (rate: number) => Int16Array.from({ length: 8 * rate }, (_, i) => Math.round(3000 * Math.sin(i / 3)))

const percentiles = (samples: Array<number>) => {
  const sorted = samples.slice().sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(1)
  return `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms`
}

const timed = async (run: () => unknown) => {
  const samples: Array<number> = []
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    await run()
    samples.push(performance.now() - started)
  }
  return percentiles(samples)
}

for (const rate of [8000, 16000] as const) {
  const pcm = speech(rate)
  console.log(`features, ${rate} Hz, 8 s: ${await timed(() => smartTurnFeatures(pcm, rate))}`)
}

const path = join(mkdtempSync(join(tmpdir(), "talkgraph-bench-")), "stand-in.onnx")
writeFileSync(path, standInTurnModel())
const runtime = ManagedRuntime.make(
  TurnModelLive.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["TALKGRAPH_TURN_MODEL", path]]))))
  )
)
const model = await runtime.runPromise(TurnModel)
const pcm = speech(8000)
await runtime.runPromise(model.completeProbability(pcm, 8000))
console.log(
  `prediction with the stand-in model, 8000 Hz: ${await timed(() =>
    runtime.runPromise(model.completeProbability(pcm, 8000))
  )}`
)
await runtime.dispose()
