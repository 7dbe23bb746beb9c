import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { decodeWav } from "../../../src/audio/wav.ts"

/**
 * eSpeak NG compiled to WebAssembly (the `espeak-ng` npm package): the offline voice for
 * development and tests. It is GPL-3.0, so it is only a devDependency, loaded on first use; a
 * production install without it is told so rather than silently given another voice.
 *
 * Rendering runs on a worker thread, one utterance at a time (each instance holds its own ~50 MB
 * copy of the voice data). Output is mono PCM16 at eSpeak's 22,050 Hz.
 */
export const ESPEAK_SAMPLE_RATE = 22050

export class EspeakUnavailable extends Error {
  constructor() {
    super(
      "the local voice needs the espeak-ng package, a devDependency: use a development checkout (npm install without --omit=dev)"
    )
  }
}

interface Reply {
  readonly id?: number
  readonly ready?: boolean
  readonly wav?: Uint8Array
  readonly error?: string
}

interface Renderer {
  readonly render: (text: string, voice: string) => Promise<Uint8Array>
}

const installed = () => {
  try {
    createRequire(import.meta.url).resolve("espeak-ng")
    return true
  } catch {
    return false
  }
}

const startRenderer = (): Promise<Renderer> =>
  new Promise((resolveRenderer, rejectRenderer) => {
    if (!installed()) return rejectRenderer(new EspeakUnavailable())
    const worker = new Worker(new URL("./espeakWorker.mjs", import.meta.url))
    const waiting = new Map<number, { resolve: (wav: Uint8Array) => void; reject: (error: Error) => void }>()
    let nextId = 0
    const fail = (error: Error) => {
      starting = undefined
      rejectRenderer(error)
      for (const job of waiting.values()) job.reject(error)
      waiting.clear()
    }
    worker.on("error", fail)
    worker.on("exit", (code) => fail(new Error(`the eSpeak worker exited (code ${code})`)))
    worker.on("message", (reply: Reply) => {
      if (reply.ready) {
        // An idle worker must not keep a test run or a CLI alive.
        worker.unref()
        return resolveRenderer({ render })
      }
      const job = waiting.get(reply.id!)
      if (job === undefined) return
      waiting.delete(reply.id!)
      if (waiting.size === 0) worker.unref()
      if (reply.error !== undefined) job.reject(new Error(reply.error))
      else job.resolve(reply.wav!)
    })
    const render = (text: string, voice: string) =>
      new Promise<Uint8Array>((resolve, reject) => {
        const id = nextId++
        waiting.set(id, { resolve, reject })
        worker.ref()
        worker.postMessage({ id, text, voice })
      })
  })

let starting: Promise<Renderer> | undefined

/** Speaks `text` with eSpeak's `voice` (default US English): mono samples in [-1, 1] at 22,050 Hz. */
export const espeakSamples = async (text: string, voice = "en-us"): Promise<Float32Array> => {
  starting ??= startRenderer()
  const renderer = await starting
  return decodeWav(await renderer.render(text, voice)).samples
}
