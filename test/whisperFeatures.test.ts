import { describe, expect, it } from "vitest"
import { fftOfSize, realPowerSpectrumOfSize } from "../src/audio/fft.ts"
import { smartTurnFeatures } from "../src/voice/smartTurnInput.ts"
import { MEL_BANDS, melBandCentresHz, whisperLogMel } from "../src/voice/whisperFeatures.ts"

const tone = (hz: number, seconds: number, rate = 16_000, amplitude = 0.3) =>
  Float32Array.from({ length: seconds * rate }, (_, i) => amplitude * Math.sin((2 * Math.PI * hz * i) / rate))

const column = (mel: { frames: number; data: Float32Array }, frame: number) =>
  Array.from({ length: MEL_BANDS }, (_, band) => mel.data[band * mel.frames + frame]!)

const loudestBand = (values: ReadonlyArray<number>) => values.indexOf(Math.max(...values))

describe("mixed-radix FFT", () => {
  it("equals the plain DFT on 400 points", () => {
    const size = 400
    const re = Float64Array.from({ length: size }, (_, i) => Math.sin(i * 0.37) + ((i * 7919) % 13) / 13)
    const im = new Float64Array(size)
    const fast = fftOfSize(size)(re, im)
    for (const k of [0, 1, 7, 123, 200, 399]) {
      let sumRe = 0
      let sumIm = 0
      for (let n = 0; n < size; n++) {
        sumRe += re[n]! * Math.cos((2 * Math.PI * k * n) / size)
        sumIm -= re[n]! * Math.sin((2 * Math.PI * k * n) / size)
      }
      expect(fast.re[k]).toBeCloseTo(sumRe, 8)
      expect(fast.im[k]).toBeCloseTo(sumIm, 8)
    }
  })

  it("gives a real frame's power spectrum from a transform of half its size", () => {
    const frame = Float64Array.from({ length: 400 }, (_, i) => Math.cos(i * 0.21) - ((i * 31) % 7) / 7)
    const full = fftOfSize(400)(frame, new Float64Array(400))
    const power = realPowerSpectrumOfSize(400)(frame)
    expect(power.length).toBe(201)
    for (let k = 0; k <= 200; k++) {
      expect(power[k]).toBeCloseTo(full.re[k]! ** 2 + full.im[k]! ** 2, 6)
    }
  })
})

describe("Whisper log-mel features", () => {
  it("gives 80 bands × 800 frames for 8 s of 16 kHz audio", () => {
    const mel = whisperLogMel(new Float32Array(128_000))
    expect(mel.frames).toBe(800)
    expect(mel.data.length).toBe(80 * 800)
  })

  it("reads silence as the floor: log10(1e-10) = -10, so (-10 + 4) / 4 = -1.5 everywhere", () => {
    const mel = whisperLogMel(new Float32Array(16_000))
    expect(new Set(mel.data)).toEqual(new Set([-1.5]))
  })

  it("puts a 440 Hz tone in band 11 (centre 447 Hz; band 10 peaks at 410 Hz)", () => {
    const mel = whisperLogMel(tone(440, 1))
    expect(loudestBand(column(mel, 50))).toBe(11)
    expect(melBandCentresHz()[11]).toBeCloseTo(446.9, 0)
  })

  it.each([250, 1000, 2500, 6000])("puts a %i Hz tone in the band that peaks nearest to it", (hz) => {
    const centres = Array.from(melBandCentresHz())
    const nearest = centres.reduce(
      (best, centre, band) => Math.abs(centre - hz) < Math.abs(centres[best]! - hz) ? band : best,
      0
    )
    const bands = column(whisperLogMel(tone(hz, 1)), 50)
    expect(Math.abs(loudestBand(bands) - nearest)).toBeLessThanOrEqual(1)
    // Far from the tone the bands sit on the floor: 8 below the loudest (log10), i.e. 2 after scaling.
    expect(Math.min(...bands)).toBeCloseTo(Math.max(...bands) - 2, 5)
  })
})

describe("smart-turn input", () => {
  it("pads short audio with silence before it, so the speech sits at the end of the 8 s", () => {
    const pcm = Int16Array.from(tone(440, 2), (sample) => Math.round(sample * 32767))
    const features = smartTurnFeatures(pcm, 16_000)
    expect(features.length).toBe(80 * 800)
    const band11 = (frame: number) => features[11 * 800 + frame]!
    expect(band11(100)).toBeLessThan(band11(700))
    expect(band11(100)).toBeCloseTo(Math.min(...features), 5)
  })

  it("resamples 8 kHz audio: a 440 Hz tone lands in the same band", () => {
    const pcm = Int16Array.from(tone(440, 2, 8000), (sample) => Math.round(sample * 32767))
    const features = smartTurnFeatures(pcm, 8000)
    const bands = Array.from({ length: MEL_BANDS }, (_, band) => features[band * 800 + 700]!)
    expect(loudestBand(bands)).toBe(11)
  })

  it("keeps only the last 8 s", () => {
    const old = Int16Array.from(tone(3000, 4), (sample) => Math.round(sample * 32767))
    const recent = Int16Array.from(tone(440, 8), (sample) => Math.round(sample * 32767))
    const both = new Int16Array(old.length + recent.length)
    both.set(old)
    both.set(recent, old.length)
    expect(smartTurnFeatures(both, 16_000)).toEqual(smartTurnFeatures(recent, 16_000))
  })
})
