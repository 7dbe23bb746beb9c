// Opens an ONNX model on onnxruntime-node the way both of talkgraph's models run (the Silero VAD,
// the optional turn model). Plain JavaScript so the VAD's worker thread can load it without a
// TypeScript loader.

/**
 * One session, one intra-op thread: the models are small, so more threads only add hand-off cost;
 * parallelism comes from batching many calls' windows into one run instead.
 *
 * The ONNX runtime (a native library of its own) is loaded with the first session, that is on the
 * first voice call, not when the server starts: a process without calls never maps it. Under
 * tsx's loader this CommonJS package's import has no `default`; its namespace is the API.
 */
export const openOnnxSession = async (modelPath) => {
  const loaded = await import("onnxruntime-node")
  const ort = loaded.default ?? loaded
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all"
  })
  return { ort, session }
}
