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
    const bytes = new Uint8Array(44 + frames * 4)
    const view = new DataView(bytes.buffer)
    const ascii = (at: number, text: string) => [...text].forEach((char, i) => view.setUint8(at + i, char.charCodeAt(0)))
    ascii(0, "RIFF")
    view.setUint32(4, 36 + frames * 4, true)
    ascii(8, "WAVE")
    ascii(12, "fmt ")
    view.setUint32(16, 16, true)
    view.setUint16(20, 1, true)
    view.setUint16(22, 2, true)
    view.setUint32(24, sampleRate, true)
    view.setUint32(28, sampleRate * 4, true)
    view.setUint16(32, 4, true)
    view.setUint16(34, 16, true)
    ascii(36, "data")
    view.setUint32(40, frames * 4, true)
    for (let frame = 0; frame < frames; frame++) {
      view.setInt16(44 + frame * 4, left.sample(frame), true)
      view.setInt16(46 + frame * 4, right.sample(frame), true)
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
