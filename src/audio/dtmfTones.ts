/**
 * In-band DTMF (ITU-T Q.23): each key is the sum of one low-group and one high-group tone. Keys are
 * sent as audio because a media stream has no other way to carry them; a phone menu on the far
 * side decodes them like a handset's. Q.24 asks receivers to accept 40 ms tones and pauses, so the
 * usual 100 ms on / 80 ms off is understood everywhere; `w` waits half a second (as dialers write it).
 */
const LOW_HZ = [697, 770, 852, 941] as const
const HIGH_HZ = [1209, 1336, 1477, 1633] as const
const KEY_ROWS = ["123A", "456B", "789C", "*0#D"] as const

/** The frequency pair of a key, or null for anything that is not one. */
export const dtmfFrequencies = (key: string): readonly [number, number] | null => {
  for (let row = 0; row < KEY_ROWS.length; row++) {
    const column = KEY_ROWS[row]!.indexOf(key)
    if (key.length === 1 && column >= 0) return [LOW_HZ[row]!, HIGH_HZ[column]!]
  }
  return null
}

/** Keys the send_dtmf tool takes: keypad keys and `w` (a half-second pause). */
export const DIAL_STRING = /^[0-9*#A-Dw]{1,64}$/

export interface ToneTiming {
  readonly onMs: number
  readonly offMs: number
}

export const standardToneTiming: ToneTiming = { onMs: 100, offMs: 80 }

const PAUSE_MS = 500
/** Each tone at -7 dBm0-ish: loud enough for any detector, far from clipping μ-law when both add up. */
const TONE_AMPLITUDE = 8000
/** A few ms of fade at each end: no click, so no spurious energy outside the pair. */
const RAMP_MS = 4

/** PCM16 of a dial string at `sampleRate` (keys the table does not know are skipped). */
export const dtmfTones = (dial: string, sampleRate: number, timing: ToneTiming = standardToneTiming): Int16Array => {
  const perMs = sampleRate / 1000
  const chunks: Array<Int16Array> = []
  for (const key of dial) {
    if (key === "w") {
      chunks.push(new Int16Array(Math.round(PAUSE_MS * perMs)))
      continue
    }
    const pair = dtmfFrequencies(key)
    if (pair === null) continue
    const on = Math.round(timing.onMs * perMs)
    const ramp = Math.round(RAMP_MS * perMs)
    const tone = new Int16Array(on)
    for (let i = 0; i < on; i++) {
      const envelope = Math.min(1, i / ramp, (on - 1 - i) / ramp)
      const t = i / sampleRate
      tone[i] = Math.round(
        TONE_AMPLITUDE * envelope * (Math.sin(2 * Math.PI * pair[0] * t) + Math.sin(2 * Math.PI * pair[1] * t))
      )
    }
    chunks.push(tone, new Int16Array(Math.round(timing.offMs * perMs)))
  }
  const out = new Int16Array(chunks.reduce((length, chunk) => length + chunk.length, 0))
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}
