// Silero VAD v5 on onnxruntime-node, shared by the in-thread engine and the inference worker.
// Plain JavaScript so a worker thread can load it without a TypeScript loader.
import { openOnnxSession } from "./onnxSession.mjs"

/** Per stream: the LSTM state, two layers of 128 (the model's `state` is [2, batch, 128]). */
export const STATE_SIZE = 256
const HALF_STATE = STATE_SIZE / 2

/** The model's batched session (see onnxSession.mjs for how it runs). */
export const openSileroSession = async (modelPath) => {
  const { ort, session } = await openOnnxSession(modelPath)
  const rates = new Map()
  const rateTensor = (rate) => {
    let tensor = rates.get(rate)
    if (tensor === undefined) {
      tensor = new ort.Tensor("int64", BigInt64Array.from([BigInt(rate)]), [])
      rates.set(rate, tensor)
    }
    return tensor
  }

  /**
   * `input` holds `size` rows of (context + window) samples; `state` holds each row's 256 floats
   * (h then c). The model wants the state as [2, batch, 128], so rows are interleaved on the way in
   * and out.
   */
  const run = async ({ rate, size, input, state }) => {
    const layered = new Float32Array(2 * size * HALF_STATE)
    for (let row = 0; row < size; row++) {
      layered.set(state.subarray(row * STATE_SIZE, row * STATE_SIZE + HALF_STATE), row * HALF_STATE)
      layered.set(state.subarray(row * STATE_SIZE + HALF_STATE, (row + 1) * STATE_SIZE), (size + row) * HALF_STATE)
    }
    const outputs = await session.run({
      input: new ort.Tensor("float32", input, [size, input.length / size]),
      state: new ort.Tensor("float32", layered, [2, size, HALF_STATE]),
      sr: rateTensor(rate)
    })
    const probabilities = Float32Array.from(outputs.output.data)
    const next = outputs.stateN.data
    const rows = new Float32Array(size * STATE_SIZE)
    for (let row = 0; row < size; row++) {
      rows.set(next.subarray(row * HALF_STATE, (row + 1) * HALF_STATE), row * STATE_SIZE)
      rows.set(next.subarray((size + row) * HALF_STATE, (size + row + 1) * HALF_STATE), row * STATE_SIZE + HALF_STATE)
    }
    return { probabilities, state: rows }
  }

  return { run, close: () => session.release() }
}
