// Renders speech with eSpeak NG (WASM) off the main thread: one instantiation per utterance keeps
// the thread busy for about a second, which must never stall the event loop carrying calls.
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { parentPort } from "node:worker_threads"

const entry = createRequire(import.meta.url).resolve("espeak-ng")
const { default: ESpeakNg } = await import("espeak-ng")
// Compiled once; each utterance still instantiates afresh because the package is the eSpeak
// command line, whose `main` runs once per instance.
const wasm = await WebAssembly.compile(await readFile(join(dirname(entry), "espeak-ng.wasm")))

const render = async ({ text, voice }) => {
  const module = await ESpeakNg({
    // The text goes through a file, so a line starting with "-" is never read as an option.
    arguments: ["-v", voice, "-w", "/speech.wav", "-f", "/speech.txt"],
    preRun: [(self) => self.FS.writeFile("/speech.txt", text)],
    print: () => {},
    printErr: () => {},
    instantiateWasm: (imports, done) => {
      WebAssembly.instantiate(wasm, imports).then((instance) => done(instance, wasm))
      return {}
    }
  })
  return module.FS.readFile("/speech.wav")
}

parentPort.on("message", (job) => {
  render(job).then(
    (wav) => parentPort.postMessage({ id: job.id, wav }, [wav.buffer]),
    (error) => parentPort.postMessage({ id: job.id, error: String(error) })
  )
})
parentPort.postMessage({ ready: true })
