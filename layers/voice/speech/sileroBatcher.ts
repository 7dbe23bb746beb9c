import type { SileroEngine } from "./sileroEngine.ts"
import { STATE_SIZE } from "./sileroSession.mjs"

/**
 * Gathers the windows of every call into batched runs. Silero is small enough that a run costs
 * mostly fixed overhead: measured here, one window alone takes ~0.35 ms while in a batch of 8 it
 * takes ~0.08 ms. A window waits at most GATHER_MS for others to join it (windows are 32 ms of
 * audio, so this delays a decision by a few percent of a window), and windows that queued while
 * the engines were busy go together in the next run. Fewer, larger runs also mean fewer messages
 * to the inference worker, which is main-thread time.
 *
 * A call never has two windows in one batch: each window needs the state left by the previous one,
 * and detectors submit their next window only after the last one's answer.
 */
const MAX_BATCH = 64
const GATHER_MS = 4

interface Window {
  /** Arrival order: with rates competing for an engine, the oldest waiting window goes first. */
  readonly seq: number
  readonly arrivedAt: number
  readonly input: Float32Array
  readonly state: Float32Array
  readonly resolve: (answer: WindowAnswer) => void
  readonly reject: (error: unknown) => void
}

interface WindowAnswer {
  readonly probability: number
  readonly state: Float32Array
}

export interface SileroBatcher {
  /** Scores one window (context + samples) from the stream's `state`; answers the next state. */
  readonly score: (rate: number, input: Float32Array, state: Float32Array) => Promise<WindowAnswer>
}

export const sileroBatcher = (engines: ReadonlyArray<SileroEngine>): SileroBatcher => {
  const idle = [...engines]
  const queues = new Map<number, Array<Window>>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let arrivals = 0

  const dispatch = (engine: SileroEngine, rate: number, windows: Array<Window>) => {
    const size = windows.length
    const rowLength = windows[0]!.input.length
    const input = new Float32Array(size * rowLength)
    const state = new Float32Array(size * STATE_SIZE)
    windows.forEach((window, row) => {
      input.set(window.input, row * rowLength)
      state.set(window.state, row * STATE_SIZE)
    })
    engine.run({ rate, size, input, state }).then(
      (result) =>
        windows.forEach((window, row) =>
          window.resolve({
            probability: result.probabilities[row]!,
            state: result.state.slice(row * STATE_SIZE, (row + 1) * STATE_SIZE)
          })
        ),
      (error: unknown) => windows.forEach((window) => window.reject(error))
    ).finally(() => {
      idle.push(engine)
      schedule(0)
    })
  }

  const oldestQueue = () => {
    let oldest: [number, Array<Window>] | undefined
    for (const entry of queues) {
      const head = entry[1][0]
      if (head !== undefined && (oldest === undefined || head.seq < oldest[1][0]!.seq)) oldest = entry
    }
    return oldest
  }

  const pump = () => {
    timer = undefined
    for (let next = oldestQueue(); next !== undefined && idle.length > 0; next = oldestQueue()) {
      const [rate, queue] = next
      const waited = performance.now() - queue[0]!.arrivedAt
      if (waited < GATHER_MS && queue.length < MAX_BATCH) return schedule(GATHER_MS - waited)
      dispatch(idle.pop()!, rate, queue.splice(0, MAX_BATCH))
    }
  }

  /** Runs `pump` after `afterMs`, or sooner if already due; an engine coming back idle re-pumps. */
  const schedule = (afterMs: number) => {
    if (idle.length === 0) return
    if (timer !== undefined) {
      if (afterMs > 0) return
      clearTimeout(timer)
    }
    timer = setTimeout(pump, afterMs)
  }

  return {
    score: (rate, input, state) =>
      new Promise((resolve, reject) => {
        let queue = queues.get(rate)
        if (queue === undefined) {
          queue = []
          queues.set(rate, queue)
        }
        queue.push({ seq: arrivals++, arrivedAt: performance.now(), input, state, resolve, reject })
        schedule(queue.length >= MAX_BATCH ? 0 : GATHER_MS)
      })
  }
}
