import { goertzelCoefficient, goertzelPower } from "../../src/audio/goertzel.ts"

/**
 * A DTMF receiver as a phone menu has one (Goertzel over 20 ms blocks): the strongest tone of each
 * group, accepted when both stand well above the rest of their group and together carry most of
 * the block's energy (speech has energy at those frequencies too, spread among many others); a key
 * is reported once seen in two blocks running, and again only after it stops.
 */
const LOW = [697, 770, 852, 941]
const HIGH = [1209, 1336, 1477, 1633]
const KEYS = ["123A", "456B", "789C", "*0#D"]

export const decodeDtmf = (pcm: Int16Array, sampleRate: number): string => {
  const blockSize = Math.round(sampleRate * 0.02)
  let keys = ""
  let candidate: string | null = null
  let seen = 0
  let reported = false
  for (let start = 0; start + blockSize <= pcm.length; start += blockSize) {
    const block = Float64Array.from(pcm.subarray(start, start + blockSize), (sample) => sample / 32768)
    const energy = block.reduce((sum, sample) => sum + sample * sample, 0)
    const low = LOW.map((frequency) => goertzelPower(block, goertzelCoefficient(frequency, sampleRate)))
    const high = HIGH.map((frequency) => goertzelPower(block, goertzelCoefficient(frequency, sampleRate)))
    const row = low.indexOf(Math.max(...low))
    const column = high.indexOf(Math.max(...high))
    // A pure tone's Goertzel power is N/2 times its energy in the block.
    const toneShare = (low[row]! + high[column]!) / ((blockSize / 2) * energy)
    const clear = energy > 1 && toneShare > 0.8 &&
      low.every((power, index) => index === row || power * 10 < low[row]!) &&
      high.every((power, index) => index === column || power * 10 < high[column]!)
    const key = clear ? KEYS[row]![column]! : null
    if (key !== null && key === candidate) {
      seen++
      if (seen >= 2 && !reported) {
        keys += key
        reported = true
      }
    } else {
      candidate = key
      seen = 1
      reported = false
    }
  }
  return keys
}
