import { emptyPcm16Wav, PCM_WAV_HEADER_BYTES } from "../audio/pcmWav.ts"

/**
 * A call's recording: the caller on the left channel, the agent on the right, both placed on
 * one clock (samples since the media stream started) so a listener hears them as they overlapped.
 * The caller's track is laid down as its audio arrives; the agent's at the moment each frame was
 * sent for play-out. Audio is kept in 1-second blocks so a long call never copies a growing buffer.
 */
const BLOCK_SECONDS = 1

export interface CallRecorder {
  readonly caller: (pcm: Int16Array) => void
  /** Agent audio starting `atMs` after the stream started (clamped to after what it already holds). */
  readonly agent: (pcm: Int16Array, atMs: number) => void
  readonly durationMs: () => number
  /** A 16-bit stereo WAV of everything recorded. */
  readonly toWav: () => Uint8Array
}

const track = (blockSamples: number) => {
  const blocks: Array<Int16Array> = []
  let length = 0
  const write = (pcm: Int16Array, at: number) => {
    for (let offset = 0; offset < pcm.length;) {
      const position = at + offset
      const index = Math.floor(position / blockSamples)
      while (blocks.length <= index) blocks.push(new Int16Array(blockSamples))
      const within = position % blockSamples
      const count = Math.min(pcm.length - offset, blockSamples - within)
      blocks[index]!.set(pcm.subarray(offset, offset + count), within)
      offset += count
    }
    length = Math.max(length, at + pcm.length)
  }
  const sample = (position: number) => blocks[Math.floor(position / blockSamples)]?.[position % blockSamples] ?? 0
  return { write, sample, length: () => length }
}

export const callRecorder = (sampleRate: number): CallRecorder => {
  const blockSamples = sampleRate * BLOCK_SECONDS
  const left = track(blockSamples)
  const right = track(blockSamples)

  const toWav = () => {
    const frames = Math.max(left.length(), right.length())
    const bytes = emptyPcm16Wav(frames, sampleRate, 2)
    const view = new DataView(bytes.buffer)
    for (let frame = 0; frame < frames; frame++) {
      view.setInt16(PCM_WAV_HEADER_BYTES + frame * 4, left.sample(frame), true)
      view.setInt16(PCM_WAV_HEADER_BYTES + frame * 4 + 2, right.sample(frame), true)
    }
    return bytes
  }

  return {
    caller: (pcm) => left.write(pcm, left.length()),
    agent: (pcm, atMs) => right.write(pcm, Math.max(right.length(), Math.round((atMs * sampleRate) / 1000))),
    durationMs: () => (Math.max(left.length(), right.length()) * 1000) / sampleRate,
    toWav
  }
}
