/**
 * What registering a clip costs: decoding and converting it to 8 kHz μ-law and 16 kHz PCM, per
 * source format, and how long the event loop is held at most meanwhile (the conversion yields
 * between slices so live calls in the same process keep their pacing).
 *
 *   npx tsx bench/recordingTranscode.ts
 */
import { monitorEventLoopDelay } from "node:perf_hooks"
import { type ClipKind, transcodeClip } from "../src/audio/clipTranscoding.ts"
import { rawMuLaw, silentMp3, sine, wavFile } from "../test/support/audioClips.ts"

const SECONDS = 60
const pause = () => new Promise<void>((resolve) => setImmediate(resolve))

const cases: Array<[string, ClipKind, Uint8Array]> = [
  ["WAV 8 kHz 16-bit mono", "wav", wavFile(sine(440, 8000, SECONDS), 8000)],
  ["WAV 16 kHz 16-bit mono", "wav", wavFile(sine(440, 16000, SECONDS), 16000)],
  ["WAV 44.1 kHz 16-bit stereo", "wav", wavFile(sine(440, 44100, SECONDS), 44100, { channels: 2 })],
  ["WAV 48 kHz 24-bit stereo", "wav", wavFile(sine(440, 48000, SECONDS), 48000, { encoding: "pcm24", channels: 2 })],
  ["raw μ-law 8 kHz", "mulaw", rawMuLaw(sine(440, 8000, SECONDS))],
  ["MP3 44.1 kHz (silent frames)", "mp3", silentMp3(SECONDS)]
]

console.log(`Transcoding ${SECONDS}-second clips (best of 3):`)
for (const [name, kind, bytes] of cases) {
  let best = Infinity
  let worstStall = 0
  for (let round = 0; round < 3; round++) {
    const delay = monitorEventLoopDelay({ resolution: 1 })
    delay.enable()
    const started = performance.now()
    await transcodeClip(bytes, kind, { maxDurationMs: SECONDS * 1000 + 100, pause })
    best = Math.min(best, performance.now() - started)
    delay.disable()
    // The first round is the warm-up (the decoder's module loads on first use, code is compiled).
    if (round > 0) worstStall = Math.max(worstStall, delay.max / 1e6)
  }
  console.log(
    `  ${name.padEnd(30)} ${(bytes.length / 1024 / 1024).toFixed(1).padStart(5)} MiB  ${
      best.toFixed(0).padStart(5)
    } ms` +
      `  (${((best / (SECONDS * 1000)) * 100).toFixed(2)}% of real time; longest event-loop stall ${
        worstStall.toFixed(1)
      } ms)`
  )
}
