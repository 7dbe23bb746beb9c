import { createHash } from "node:crypto"
import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ESPEAK_SAMPLE_RATE, espeakSamples } from "../../layers/voice/speech/espeakVoice.ts"
import { resample } from "../../src/audio/resample.ts"
import { toInt16 } from "../../src/audio/sampleFormats.ts"

/**
 * Offline speech for tests: lines rendered by eSpeak NG (WASM) and resampled to the call's rate.
 *
 * Rendering costs about a second of busy thread per line, so renders are cached in memory and, across
 * test files and runs, on disk (the raw 22,050 Hz render, keyed by text). Render a scenario's lines
 * before its call starts: a render during a real-time call stalls the event loop it shares.
 */
const CACHE_DIRECTORY = join(tmpdir(), "talkgraph-espeak-cache-v1")

const rendered = new Map<string, Promise<Float32Array>>()
const spoken = new Map<string, Promise<Int16Array>>()

const diskCached = async (text: string): Promise<Float32Array> => {
  const file = join(CACHE_DIRECTORY, `${createHash("sha256").update(text).digest("hex")}.f32`)
  try {
    const bytes = await readFile(file)
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
  } catch {
    const samples = await espeakSamples(text)
    await mkdir(CACHE_DIRECTORY, { recursive: true })
    const partial = `${file}.${process.pid}.tmp`
    await writeFile(partial, new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength))
    await rename(partial, file)
    return samples
  }
}

/** Samples in [-1, 1] at eSpeak's own 22,050 Hz. */
export const speechSamples = (text: string): Promise<Float32Array> => {
  let samples = rendered.get(text)
  if (samples === undefined) {
    samples = diskCached(text)
    rendered.set(text, samples)
    samples.catch(() => rendered.delete(text))
  }
  return samples
}

/** `text` spoken by eSpeak NG as mono PCM16 at `sampleRate`, cached by text and rate. */
export const speak = (text: string, sampleRate: number): Promise<Int16Array> => {
  const key = `${sampleRate}\u0000${text}`
  let pcm = spoken.get(key)
  if (pcm === undefined) {
    pcm = speechSamples(text).then((samples) => toInt16(resample(samples, ESPEAK_SAMPLE_RATE, sampleRate)))
    spoken.set(key, pcm)
    pcm.catch(() => spoken.delete(key))
  }
  return pcm
}
