import { openOnnxSession } from "./onnxSession.mjs"

/** Smart-turn v3's input: Whisper features of 8 s, 80 bands × 800 frames. */
const INPUT = "input_features"
const DIMS = [1, 80, 800] as const

export interface TurnModelSession {
  /** The model's sigmoid output for one 80 × 800 feature window. */
  readonly run: (features: Float32Array) => Promise<number>
  readonly close: () => Promise<void>
}

/** Dimensions may be symbolic (a batch axis exported as dynamic); fixed ones must match. */
const fits = (shape: ReadonlyArray<number | string>) =>
  shape.length === DIMS.length && shape.every((dim, i) => typeof dim === "string" || dim === DIMS[i])

/**
 * Opens the model and proves it has smart-turn's shape: an `input_features` float input of
 * [1, 80, 800] and one probability out (checked on a window of silence), so a wrong file fails
 * here, once, rather than on every turn.
 */
export const openTurnModelSession = async (path: string): Promise<TurnModelSession> => {
  const { ort, session } = await openOnnxSession(path)
  const input = session.inputMetadata.find((meta) => meta.name === INPUT)
  if (input === undefined || !input.isTensor || input.type !== "float32" || !fits(input.shape)) {
    await session.release()
    throw new Error(`it has no float32 input "${INPUT}" shaped [1, 80, 800] (inputs: ${session.inputNames.join(", ")})`)
  }
  const output = session.outputNames[0]!
  const run = async (features: Float32Array) => {
    const outputs = await session.run({ [INPUT]: new ort.Tensor("float32", features, [...DIMS]) })
    const data = outputs[output]?.data
    const probability = data instanceof Float32Array && data.length === 1 ? data[0]! : Number.NaN
    if (!(probability >= 0 && probability <= 1)) {
      throw new Error(`its output "${output}" is not one probability in [0, 1]`)
    }
    return probability
  }
  try {
    await run(new Float32Array(DIMS[1] * DIMS[2]).fill(-1.5))
  } catch (error) {
    await session.release()
    throw error
  }
  return { run, close: () => session.release() }
}
