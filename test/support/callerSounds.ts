import { speak } from "./speechAudio.ts"

/**
 * What a test caller's line carries besides words: a callee script line written `(noise 400)` is
 * 400 ms of white noise, `(music 2000)` two seconds of a chord that changes every half second,
 * `(hum 1000)` a mains hum; anything else is speech (eSpeak NG). Noise is seeded, so a scenario
 * sends the same audio on every run.
 */
const SOUND = /^\((noise|music|hum) (\d+)(?: (-?\d+)dB)?\)$/

const seeded = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

export const callerSound = (text: string, sampleRate: number): Int16Array | null => {
  const match = SOUND.exec(text)
  if (match === null) return null
  const [, kind, ms, db] = match
  const length = Math.round((Number(ms) * sampleRate) / 1000)
  const amplitude = 32767 * 10 ** (Number(db ?? (kind === "noise" ? -30 : -24)) / 20)
  const random = seeded(length)
  return Int16Array.from({ length }, (_, i) => {
    const t = i / sampleRate
    switch (kind) {
      case "noise":
        return Math.round(amplitude * (random() * 2 - 1) * 1.7)
      case "hum":
        return Math.round(
          amplitude * Math.sin(2 * Math.PI * 50 * t) + 0.3 * amplitude * Math.sin(2 * Math.PI * 150 * t)
        )
      default: {
        const chord = [[262, 330, 392], [220, 262, 330], [175, 220, 262], [196, 247, 294]][Math.floor(t * 2) % 4]!
        return Math.round((amplitude / 3) * chord.reduce((sum, f) => sum + Math.sin(2 * Math.PI * f * t), 0))
      }
    }
  })
}

/** A callee's `speak`: sounds as above, words spoken by eSpeak NG. */
export const speakOrSound = (text: string, sampleRate: number): Promise<Int16Array> => {
  const sound = callerSound(text, sampleRate)
  return sound === null ? speak(text, sampleRate) : Promise.resolve(sound)
}
