/** The rate of the browser test call's audio, both ways (src/telephony/media/browser.ts). */
export const CALL_SAMPLE_RATE = 16000

/**
 * Microphone samples at the audio context's rate to PCM16 at 16 kHz, one block at a time (blocks
 * of any length; what does not fill an output sample is carried to the next block). Each output
 * sample averages the input it spans: a cheap low-pass that keeps a 48 kHz microphone's energy
 * above 8 kHz from folding back into the speech band.
 */
export const pcm16Resampler = (fromRate: number) => {
  const step = fromRate / CALL_SAMPLE_RATE
  let carried = new Float32Array(0)
  /** Where the next output sample starts, in samples of `carried` and the next block. */
  let position = 0
  return (block: Float32Array): Int16Array => {
    const input = new Float32Array(carried.length + block.length)
    input.set(carried)
    input.set(block, carried.length)
    const output = new Int16Array(Math.max(0, Math.floor((input.length - position) / step)))
    let written = 0
    while (written < output.length) {
      const start = Math.floor(position)
      const end = Math.max(start + 1, Math.floor(position + step))
      let sum = 0
      for (let index = start; index < end; index++) sum += input[index]!
      const sample = Math.max(-1, Math.min(1, sum / (end - start)))
      output[written++] = Math.round(sample < 0 ? sample * 32768 : sample * 32767)
      position += step
    }
    const kept = Math.floor(position)
    carried = input.slice(kept)
    position -= kept
    return output
  }
}
