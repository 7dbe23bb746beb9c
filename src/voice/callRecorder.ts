import { emptyPcm16Wav, PCM_WAV_HEADER_BYTES } from "../audio/pcmWav.ts"

/**
 * A call's recording: the caller on the left channel, the agent on the right, both placed on
 * one clock (samples since the media stream started) so a listener hears them as they overlapped.
 * The caller's track is laid down as its audio arrives; the agent's at the moment each frame was
 * sent for play-out. Audio is kept in 1-second blocks so a long call never copies a growing buffer.
 */
const BLOCK_SECONDS = 1
const LITTLE_ENDIAN_HOST = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1

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
  return { write, block: (index: number): Int16Array | undefined => blocks[index], length: () => length }
}

export const callRecorder = (sampleRate: number): CallRecorder => {
  const blockSamples = sampleRate * BLOCK_SECONDS
  const left = track(blockSamples)
  const right = track(blockSamples)

  const toWav = () => {
    const frames = Math.max(left.length(), right.length())
    const bytes = emptyPcm16Wav(frames, sampleRate, 2)
    // Whole blocks into an Int16Array over the data, not a sample at a time through a block lookup
    // and a DataView: at the end of a 20 s call that took ~15 ms of the event loop all calls share.
    // A WAV is little-endian, so is every host Node runs on (checked: otherwise bytes are swapped).
    const samples = new Int16Array(bytes.buffer, PCM_WAV_HEADER_BYTES, frames * 2)
    for (let index = 0; index * blockSamples < frames; index++) {
      const from = index * blockSamples
      const count = Math.min(blockSamples, frames - from)
      const l = left.block(index)
      const r = right.block(index)
      for (let i = 0, at = from * 2; i < count; i++, at += 2) {
        samples[at] = l?.[i] ?? 0
        samples[at + 1] = r?.[i] ?? 0
      }
    }
    if (!LITTLE_ENDIAN_HOST) {
      const view = new DataView(bytes.buffer)
      for (let at = PCM_WAV_HEADER_BYTES; at < bytes.length; at += 2) view.setInt16(at, view.getInt16(at), true)
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
