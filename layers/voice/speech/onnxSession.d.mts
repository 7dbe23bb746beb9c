import type * as Ort from "onnxruntime-node"

export declare const openOnnxSession: (
  modelPath: string
) => Promise<{ readonly ort: typeof Ort; readonly session: Ort.InferenceSession }>
