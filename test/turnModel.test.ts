import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TurnModelLive } from "../layers/voice/speech/turnModel.ts"
import { TurnModel } from "../services/TurnModel.ts"
import { standInTurnModel } from "./support/standInTurnModel.ts"

const folder = mkdtempSync(join(tmpdir(), "talkgraph-turn-model-"))
const modelFile = (name: string, bytes: Uint8Array) => {
  const path = join(folder, name)
  writeFileSync(path, bytes)
  return path
}

const withModelAt = (path: string | null) =>
  TurnModelLive.pipe(
    Layer.provide(
      Layer.setConfigProvider(ConfigProvider.fromMap(new Map(path === null ? [] : [["TALKGRAPH_TURN_MODEL", path]])))
    )
  )

/** Noise like speech at `level`, then `silenceMs` of silence, at `rate`. */
const speechThenSilence = (speechMs: number, silenceMs: number, rate: 8000 | 16000) => {
  const speech = (speechMs * rate) / 1000
  const pcm = new Int16Array(speech + (silenceMs * rate) / 1000)
  let seed = 7
  for (let i = 0; i < speech; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    pcm[i] = Math.round((seed / 2147483648 - 0.5) * 8000)
  }
  return pcm
}

describe("the end-of-turn model (a stand-in of smart-turn v3's shape, run by onnxruntime-node)", () => {
  const valid = modelFile("stand-in.onnx", standInTurnModel())

  it.scoped("reads speech that runs to the end of the audio as incomplete, and a trailing silence as complete", () =>
    Effect.gen(function*() {
      const model = yield* TurnModel
      expect(model.configured).toBe(true)
      const talking = yield* model.completeProbability(speechThenSilence(1500, 0, 8000), 8000)
      const stopped = yield* model.completeProbability(speechThenSilence(1500, 600, 8000), 8000)
      const wide = yield* model.completeProbability(speechThenSilence(1500, 600, 16000), 16000)
      expect(talking).toBeLessThan(0.5)
      expect(stopped).toBeGreaterThanOrEqual(0.5)
      expect(wide).toBeGreaterThanOrEqual(0.5)
    }).pipe(Effect.provide(withModelAt(valid))))

  it.scoped("is not configured without TALKGRAPH_TURN_MODEL", () =>
    Effect.gen(function*() {
      const model = yield* TurnModel
      expect(model.configured).toBe(false)
    }).pipe(Effect.provide(withModelAt(null))))

  it.scoped.each<readonly [string, string, string]>([
    ["a missing file", join(folder, "nowhere.onnx"), "could not be loaded"],
    [
      "a file that is not a model",
      modelFile("junk.onnx", new TextEncoder().encode("not a model")),
      "could not be loaded"
    ],
    ["a model of another input shape", modelFile("short.onnx", standInTurnModel({ frames: 100 })), "[1, 80, 800]"],
    [
      "a model without input_features",
      modelFile("named.onnx", standInTurnModel({ inputName: "audio" })),
      "input_features"
    ]
  ])("fails with %s, every time, with a message naming the problem", ([, path, expected]) =>
    Effect.gen(function*() {
      const model = yield* TurnModel
      expect(model.configured).toBe(true)
      const first = yield* Effect.flip(model.completeProbability(new Int16Array(8000), 8000))
      const again = yield* Effect.flip(model.completeProbability(new Int16Array(8000), 8000))
      expect(first._tag).toBe("TurnModelFailed")
      expect(first.message).toContain(expected)
      expect(again.message).toBe(first.message)
    }).pipe(Effect.provide(withModelAt(path))))

  it.scoped("logs the unusable model once, as an error naming the file", () => {
    const logged: Array<{ readonly level: string; readonly message: unknown }> = []
    const capture = Logger.make(({ logLevel, message }) => logged.push({ level: logLevel.label, message }))
    const path = join(folder, "absent.onnx")
    return Effect.gen(function*() {
      const model = yield* TurnModel
      yield* Effect.flip(model.completeProbability(new Int16Array(8000), 8000))
      yield* Effect.flip(model.completeProbability(new Int16Array(8000), 8000))
      expect(logged.filter((entry) => entry.level === "ERROR")).toEqual([{
        level: "ERROR",
        message: [
          "The end-of-turn model (TALKGRAPH_TURN_MODEL) cannot be used; calls end turns with the heuristic endpointing"
        ]
      }])
    }).pipe(Effect.provide(withModelAt(path)), Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
  })
})
