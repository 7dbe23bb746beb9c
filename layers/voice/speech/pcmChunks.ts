import { toInt16 } from "../../../src/audio/sampleFormats.ts"
import { streamingResampler } from "../../../src/audio/streamingResample.ts"

/**
 * Raw PCM16 little-endian bytes as a provider streams them, turned into mono sample chunks at the
 * call's rate: half a sample left at the end of a network chunk waits for the next one, audio at
 * another rate goes through the streaming resampler, and no chunk is longer than 100 ms so the
 * caller can pace (and interrupt) play-out finely.
 */
const MAX_CHUNK_MS = 100

interface PcmChunker {
  readonly push: (bytes: Uint8Array) => ReadonlyArray<Int16Array>
  readonly end: () => ReadonlyArray<Int16Array>
}

const split = (samples: Int16Array, rate: number): ReadonlyArray<Int16Array> => {
  const most = (rate * MAX_CHUNK_MS) / 1000
  const chunks: Array<Int16Array> = []
  for (let at = 0; at < samples.length; at += most) chunks.push(samples.slice(at, at + most))
  return chunks
}

export const pcmChunker = (sourceRate: number, targetRate: number): PcmChunker => {
  const resampler = sourceRate === targetRate ? undefined : streamingResampler(sourceRate, targetRate)
  let carried: number | undefined
  const convert = (samples: Int16Array) => {
    if (resampler === undefined) return samples
    const floats = new Float32Array(samples.length)
    for (let i = 0; i < samples.length; i++) floats[i] = samples[i]! / 32768
    return toInt16(resampler.push(floats))
  }
  return {
    push: (bytes) => {
      const total = bytes.length + (carried === undefined ? 0 : 1)
      const samples = new Int16Array(Math.floor(total / 2))
      const byteAt = (i: number) => (carried === undefined ? bytes[i]! : i === 0 ? carried : bytes[i - 1]!)
      for (let i = 0; i < samples.length; i++) {
        const value = byteAt(2 * i) | (byteAt(2 * i + 1) << 8)
        samples[i] = value >= 0x8000 ? value - 0x10000 : value
      }
      carried = total % 2 === 1 ? byteAt(total - 1) : undefined
      return split(convert(samples), targetRate)
    },
    end: () => (resampler === undefined ? [] : split(toInt16(resampler.flush()), targetRate))
  }
}

/** Float samples (a local render) as chunks at the call's rate, converted a chunk at a time. */
export const floatChunks = function*(
  samples: Float32Array,
  sourceRate: number,
  targetRate: number
): Generator<Int16Array> {
  const resampler = streamingResampler(sourceRate, targetRate)
  const step = (sourceRate * MAX_CHUNK_MS) / 1000
  for (let at = 0; at < samples.length; at += step) {
    const converted = toInt16(resampler.push(samples.subarray(at, at + step)))
    if (converted.length > 0) yield* split(converted, targetRate)
  }
  const rest = toInt16(resampler.flush())
  if (rest.length > 0) yield* split(rest, targetRate)
}
