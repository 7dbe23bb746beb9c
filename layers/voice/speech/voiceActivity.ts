import { Config, Effect, Layer } from "effect"
import { InvalidConfiguration } from "../../../services/AppConfig.ts"
import {
  type SpeechSegmentation,
  VoiceActivity,
  type VoiceActivityDetector,
  type VoiceActivityEvent,
  type VoiceSampleRate
} from "../../../services/VoiceActivity.ts"
import { type SegmenterState, segmentWindow, SILENCE } from "../../../src/voice/speechSegmenter.ts"
import { voiceEnd } from "../../../src/voice/voiceEnd.ts"
import { type SileroBatcher, sileroBatcher } from "./sileroBatcher.ts"
import { inlineSileroEngine, type SileroEngine, sileroModelPath, workerSileroEngine } from "./sileroEngine.ts"
import { STATE_SIZE } from "./sileroSession.mjs"

/** LiveKit's Silero plugin starts from the same threshold; a pause of 400 ms ends an utterance. */
export const DEFAULT_SEGMENTATION: SpeechSegmentation = { threshold: 0.5, minSpeechMs: 64, minSilenceMs: 400 }

/**
 * Silero v5's native windows: 256 samples at 8 kHz and 512 at 16 kHz (32 ms), each preceded by the
 * last 32 / 64 samples of the window before it, as the model was trained.
 */
const WINDOWS: Record<VoiceSampleRate, { readonly samples: number; readonly context: number }> = {
  8000: { samples: 256, context: 32 },
  16000: { samples: 512, context: 64 }
}

/**
 * `TALKGRAPH_VAD_WORKERS` (default 0, 0–8): inference worker threads, each with its own session;
 * 0 runs inference on the event loop itself. Batched, Silero costs well under 1 % of a core per
 * call, and on a busy 2-core machine a worker thread starved of CPU answered windows up to half a
 * second late (barge-in waits on those answers) while the event loop answered within ~30 ms (see
 * bench/vadThroughput.ts). Workers pay off with more cores and hundreds of calls per process.
 */
export const vadWorkers = Config.integer("TALKGRAPH_VAD_WORKERS").pipe(
  Config.validate({ message: "must be between 0 and 8", validation: (workers) => workers >= 0 && workers <= 8 }),
  Config.withDefault(0),
  Effect.mapError((error) => new InvalidConfiguration({ message: `Invalid configuration: ${String(error)}` }))
)

const openEngines = (workers: number): Promise<ReadonlyArray<SileroEngine>> => {
  const modelPath = sileroModelPath()
  return workers === 0
    ? inlineSileroEngine(modelPath).then((engine) => [engine])
    : Promise.all(Array.from({ length: workers }, () => workerSileroEngine(modelPath)))
}

/**
 * A window below -60 dBFS RMS is taken as silence without asking the model: a phone line's idle
 * noise sits below it, speech far above it. It spares the model most of a call's windows (the
 * caller listening, and the agent's echo, held back as digital silence) and the event loop a wait
 * for each of them. After such a window the model starts over as at the start of a call: left with
 * the state of the speech before the gap, it took the next sound (a backchannel, noise) for that
 * speech going on, and cut the agent short.
 */
const QUIET_POWER = 10 ** (-60 / 10)
const FRESH_STATE = new Float32Array(STATE_SIZE)

const makeDetector = (
  batcher: SileroBatcher,
  rate: VoiceSampleRate,
  initial: SpeechSegmentation
): VoiceActivityDetector => {
  const { samples, context } = WINDOWS[rate]
  const windowMs = (samples * 1000) / rate
  let settings = initial
  let modelState: Float32Array = new Float32Array(STATE_SIZE)
  let previous = new Float32Array(context)
  const pending = new Float32Array(samples)
  let filled = 0
  /** Sum of squares of the samples in `pending`. */
  let power = 0
  let windowsScored = 0
  let segmenter: SegmenterState = SILENCE
  const ends = voiceEnd(rate)

  /** A pause or an end is dated where the voice stopped, not where the model's probability fell. */
  const datedAtVoiceEnd = (event: VoiceActivityEvent, sinceMs: number, untilMs: number): VoiceActivityEvent => {
    switch (event._tag) {
      case "SpeechPaused":
        return { ...event, atMs: ends.refine(event.atMs, sinceMs, untilMs) }
      case "SpeechEnded": {
        const atMs = ends.refine(event.atMs, sinceMs, untilMs)
        return { ...event, atMs, speechMs: event.speechMs - (event.atMs - atMs) }
      }
      default:
        return event
    }
  }

  const segment = (probability: number, events: Array<VoiceActivityEvent>) => {
    const startMs = windowsScored++ * windowMs
    const speechSinceMs = segmenter._tag === "Speech" ? segmenter.sinceMs : startMs
    const next = segmentWindow(segmenter, settings, { startMs, endMs: startMs + windowMs, probability })
    segmenter = next.state
    for (const event of next.events) events.push(datedAtVoiceEnd(event, speechSinceMs, startMs + windowMs))
  }

  /**
   * Feeds `pcm` window by window. A quiet window is decided here, without the model; a voiced one
   * is scored, and the rest of `pcm` waits for its answer (hence a promise only then).
   */
  const feed = (
    pcm: Int16Array,
    events: Array<VoiceActivityEvent>
  ): Array<VoiceActivityEvent> | Promise<Array<VoiceActivityEvent>> => {
    let offset = 0
    while (offset < pcm.length) {
      const take = Math.min(samples - filled, pcm.length - offset)
      for (let i = 0; i < take; i++) {
        const sample = pcm[offset + i]! / 32768
        pending[filled + i] = sample
        power += sample * sample
      }
      filled += take
      offset += take
      if (filled < samples) break
      filled = 0
      const quiet = power < samples * QUIET_POWER
      power = 0
      if (quiet) {
        modelState = FRESH_STATE
        previous = pending.slice(samples - context)
        segment(0, events)
        continue
      }
      const input = new Float32Array(context + samples)
      input.set(previous)
      input.set(pending, context)
      previous = input.subarray(samples)
      const rest = pcm.slice(offset)
      return batcher.score(rate, input, modelState).then((answer) => {
        modelState = answer.state
        segment(answer.probability, events)
        return feed(rest, events)
      })
    }
    return events
  }

  // Pushes run one after another: each window needs the model state the previous one left.
  let last: Promise<unknown> = Promise.resolve()
  let inFlight = 0
  const inOrder = (run: Promise<Array<VoiceActivityEvent>>) => {
    inFlight++
    const settled = run.finally(() => inFlight--)
    last = settled.catch(() => undefined)
    return Effect.promise(() => settled)
  }
  return {
    push: (pcm) =>
      Effect.suspend(() => {
        ends.push(pcm)
        if (inFlight > 0) {
          const copy = pcm.slice()
          return inOrder(last.then(() => feed(copy, [])))
        }
        // Most frames complete no window or only a quiet one: those are decided without a promise.
        const events = feed(pcm, [])
        return Array.isArray(events) ? Effect.succeed(events) : inOrder(events)
      }),
    configure: (segmentation) => {
      settings = { ...settings, ...segmentation }
    }
  }
}

/**
 * Silero VAD: one model per process (on its inference worker), state per call. The model is
 * loaded on the first call's detector, so a process that never takes a voice call never pays for
 * it; the layer's scope ends the worker.
 */
export const VoiceActivityLive = Layer.scoped(
  VoiceActivity,
  Effect.gen(function*() {
    const workers = yield* vadWorkers
    let engines: Promise<ReadonlyArray<SileroEngine>> | undefined
    let batcher: Promise<SileroBatcher> | undefined
    const loadBatcher = () => {
      batcher ??= (engines = openEngines(workers)).then(sileroBatcher, (error: unknown) => {
        engines = batcher = undefined
        throw error
      })
      return batcher
    }
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        const opened = await engines?.catch(() => [])
        await Promise.all((opened ?? []).map((engine) => engine.close()))
      })
    )
    const detector = Effect.fn("VoiceActivity.detector")(function*(
      sampleRate: VoiceSampleRate,
      segmentation?: Partial<SpeechSegmentation>
    ) {
      const shared = yield* Effect.tryPromise(loadBatcher).pipe(Effect.orDie)
      return makeDetector(shared, sampleRate, { ...DEFAULT_SEGMENTATION, ...segmentation })
    })
    return VoiceActivity.of({ detector })
  })
)
