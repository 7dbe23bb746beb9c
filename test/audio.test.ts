import { describe, expect, it } from "vitest"
import { AudioRejected } from "../src/audio/audioRejected.ts"
import { transcodeClip } from "../src/audio/clipTranscoding.ts"
import { A_LAW_DECODE, encodeMuLaw, MU_LAW_DECODE } from "../src/audio/g711.ts"
import { resample } from "../src/audio/resample.ts"
import { decodeWav, readWavLayout } from "../src/audio/wav.ts"
import { rawMuLaw, silentMp3, sine, type WavEncoding, wavFile } from "./support/audioClips.ts"

const limits = { maxDurationMs: 10_000, pause: () => Promise.resolve() }

const rms = (samples: ArrayLike<number>, from = 0, to = samples.length) => {
  let sum = 0
  for (let i = from; i < to; i++) sum += samples[i]! ** 2
  return Math.sqrt(sum / (to - from))
}

/** The strongest correlation of `samples` with a sine of `frequency` (phase-free), as an amplitude. */
const toneAmplitude = (samples: Float32Array, sampleRate: number, frequency: number) => {
  let re = 0
  let im = 0
  for (let i = 0; i < samples.length; i++) {
    re += samples[i]! * Math.cos((2 * Math.PI * frequency * i) / sampleRate)
    im += samples[i]! * Math.sin((2 * Math.PI * frequency * i) / sampleRate)
  }
  return (2 * Math.hypot(re, im)) / samples.length
}

const rejection = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (failure: unknown) => failure)
  expect(error).toBeInstanceOf(AudioRejected)
  return error as AudioRejected
}

describe("G.711", () => {
  it("μ-law encoding inverts decoding for every code (but negative zero)", () => {
    for (let byte = 0; byte < 256; byte++) {
      if (byte === 0x7f) continue
      expect(encodeMuLaw(Int16Array.of(MU_LAW_DECODE[byte]!))[0]).toBe(byte)
    }
  })

  it("decodes the G.711 reference points", () => {
    expect(MU_LAW_DECODE[0xff]).toBe(0)
    expect(MU_LAW_DECODE[0x80]).toBe(32124)
    expect(MU_LAW_DECODE[0x00]).toBe(-32124)
    expect(A_LAW_DECODE[0xd5]).toBe(8)
    expect(A_LAW_DECODE[0x55]).toBe(-8)
    expect(A_LAW_DECODE[0xaa]).toBe(32256)
  })
})

describe("WAV decoding", () => {
  const tone = sine(440, 16000, 0.5)
  it.each<[WavEncoding, number]>([
    ["pcm8", 0.02],
    ["pcm16", 0.001],
    ["pcm24", 0.001],
    ["pcm32", 0.001],
    ["float32", 0.001],
    ["mulaw", 0.02],
    ["alaw", 0.02]
  ])("reads %s samples back within %f", (encoding, tolerance) => {
    const decoded = decodeWav(wavFile(tone, 16000, { encoding, channels: 2 }))
    expect(decoded.sampleRate).toBe(16000)
    expect(decoded.channels).toBe(2)
    expect(decoded.samples.length).toBe(tone.length)
    let worst = 0
    for (let i = 0; i < tone.length; i++) worst = Math.max(worst, Math.abs(decoded.samples[i]! - tone[i]!))
    expect(worst).toBeLessThan(tolerance)
  })

  it("refuses what it cannot decode, saying why", () => {
    expect(() => readWavLayout(new TextEncoder().encode("hello, not audio"))).toThrow(/not a WAV file/)
    const odd = wavFile(tone, 16000)
    new DataView(odd.buffer).setUint32(24, 7000, true)
    expect(() => readWavLayout(odd)).toThrow(/7000 Hz is not supported/)
    const adpcm = wavFile(tone, 16000)
    new DataView(adpcm.buffer).setUint16(20, 2, true)
    expect(() => readWavLayout(adpcm)).toThrow(/WAV format 2/)
  })
})

describe("resampling", () => {
  it("keeps a tone in the band and its level", () => {
    const out = resample(sine(1000, 48000, 1), 48000, 8000)
    expect(out.length).toBe(8000)
    expect(toneAmplitude(out.subarray(200, 7800), 8000, 1000)).toBeCloseTo(0.5, 2)
  })

  it("removes what lies above the new Nyquist frequency instead of folding it back", () => {
    // 6 kHz would alias to 2 kHz at 8 kHz; the filter must drop it by more than 50 dB.
    const out = resample(sine(6000, 48000, 1), 48000, 8000)
    expect(rms(out, 200, 7800)).toBeLessThan(0.5 * 0.003)
  })

  it("keeps a constant exactly constant and upsamples 8 kHz to 16 kHz", () => {
    const out = resample(new Float32Array(800).fill(0.25), 8000, 16000)
    expect(out.length).toBe(1600)
    for (let i = 100; i < 1500; i++) expect(out[i]).toBeCloseTo(0.25, 5)
    const tone = resample(sine(440, 44100, 0.5), 44100, 16000)
    expect(tone.length).toBe(8000)
    expect(toneAmplitude(tone.subarray(100, 7900), 16000, 440)).toBeCloseTo(0.5, 2)
  })
})

describe("clip transcoding", () => {
  it("converts a WAV clip to 8 kHz μ-law and 16 kHz PCM of the same length", async () => {
    const clip = await transcodeClip(wavFile(sine(440, 44100, 2), 44100, { channels: 2 }), "wav", limits)
    expect(clip.durationMs).toBe(2000)
    expect(clip.ulaw8k.length).toBe(16000)
    expect(clip.pcm16k.length).toBe(64000)
    expect(clip.source).toEqual({ format: "wav/pcm16", sampleRate: 44100, channels: 2 })
    const pcm = new Int16Array(clip.pcm16k.buffer, clip.pcm16k.byteOffset, clip.pcm16k.length / 2)
    expect(toneAmplitude(Float32Array.from(pcm, (value) => value / 32768).subarray(500, 31500), 16000, 440))
      .toBeCloseTo(0.5, 2)
  })

  it("passes raw 8 kHz μ-law through unchanged", async () => {
    const bytes = rawMuLaw(sine(300, 8000, 1))
    const clip = await transcodeClip(bytes, "mulaw", limits)
    expect(clip.ulaw8k).toEqual(bytes)
    expect(clip.source.format).toBe("mulaw")
  })

  it("decodes MP3 with the WebAssembly decoder", async () => {
    const clip = await transcodeClip(silentMp3(1.5), "mp3", limits)
    expect(clip.source).toMatchObject({ format: "mp3", sampleRate: 44100, channels: 1 })
    expect(clip.durationMs).toBeGreaterThanOrEqual(1450)
    expect(clip.durationMs).toBeLessThanOrEqual(1600)
    expect(Math.abs(clip.pcm16k.length - 4 * clip.ulaw8k.length)).toBeLessThanOrEqual(4)
  })

  it("refuses overlong clips before decoding them, in every format", async () => {
    const short = { ...limits, maxDurationMs: 1000 }
    expect((await rejection(transcodeClip(wavFile(sine(440, 8000, 1.5), 8000), "wav", short))).reason).toBe(
      "audio_too_long"
    )
    expect((await rejection(transcodeClip(rawMuLaw(sine(440, 8000, 1.5)), "mulaw", short))).reason).toBe(
      "audio_too_long"
    )
    expect((await rejection(transcodeClip(silentMp3(1.5), "mp3", short))).reason).toBe("audio_too_long")
  })

  it("refuses files that are not what they claim", async () => {
    const text = new TextEncoder().encode("id,name\n1,Ann\n")
    expect((await rejection(transcodeClip(text, "wav", limits))).message).toMatch(/not a WAV file/)
    expect((await rejection(transcodeClip(text, "mp3", limits))).message).toMatch(/not an MP3 file/)
    expect((await rejection(transcodeClip(new Uint8Array(0), "mulaw", limits))).reason).toBe("audio_empty")
  })
})
