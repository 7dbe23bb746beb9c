// The inference worker: one Silero session answering batches posted by the main thread, so the
// model's CPU time never blocks the event loop that carries the calls' media.
import { parentPort, workerData } from "node:worker_threads"
import { openSileroSession } from "./sileroSession.mjs"

const session = await openSileroSession(workerData.modelPath)

parentPort.on("message", (job) => {
  session.run(job).then(
    (result) => parentPort.postMessage({ id: job.id, ...result }, [result.probabilities.buffer, result.state.buffer]),
    (error) => parentPort.postMessage({ id: job.id, error: String(error) })
  )
})
parentPort.postMessage({ ready: true })
