import { polyphaseFilter } from "./resample.ts"

/**
 * The windowed-sinc resampler of `resample.ts` over audio that arrives in pieces (a TTS stream):
 * each output sample is rendered as soon as every input it weighs has arrived, and the input
 * before the next output's window is dropped. Piece boundaries leave no trace: the concatenated
 * output equals the whole-buffer conversion of the concatenated input, sample for sample.
 */
interface StreamingResampler {
  /** The next input; answers the output samples it completes. */
  readonly push: (input: Float32Array) => Float32Array
  /** The input has ended (as if followed by silence): answers the remaining output. */
  readonly flush: () => Float32Array
}

export const streamingResampler = (fromRate: number, toRate: number): StreamingResampler => {
  if (fromRate === toRate) return { push: (input) => input.slice(), flush: () => new Float32Array(0) }
  const { up, down, reach, taps, coefficients } = polyphaseFilter(fromRate, toRate)
  /** Input kept from absolute index `kept` on; `received` samples have arrived in all. */
  let buffer = new Float32Array(0)
  let kept = 0
  let received = 0
  let next = 0

  const firstInput = (n: number) => Math.floor((n * down) / up) - reach + 1

  const render = (end: number) => {
    const out = new Float32Array(Math.max(0, end - next))
    for (let i = 0; next < end; next++, i++) {
      const position = next * down
      const base = Math.floor(position / up)
      const offset = (position - base * up) * taps
      const first = base - reach + 1
      let acc = 0
      for (let j = 0; j < taps; j++) {
        const k = first + j
        if (k >= 0 && k < received) acc += buffer[k - kept]! * coefficients[offset + j]!
      }
      out[i] = acc
    }
    const keepFrom = Math.max(kept, Math.min(received, firstInput(next)))
    if (keepFrom > kept) {
      buffer = buffer.slice(keepFrom - kept)
      kept = keepFrom
    }
    return out
  }

  return {
    push: (input) => {
      const grown = new Float32Array(buffer.length + input.length)
      grown.set(buffer)
      grown.set(input, buffer.length)
      buffer = grown
      received += input.length
      // The last output whose window [first, first + taps) has fully arrived.
      let end = next
      while (firstInput(end) + taps <= received) end++
      return render(end)
    },
    flush: () => render(Math.floor((received * up) / down))
  }
}
