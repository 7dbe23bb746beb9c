/** A clip decoded to mono samples in [-1, 1], with what it was before decoding. */
export interface DecodedAudio {
  readonly samples: Float32Array
  readonly sampleRate: number
  /** Channels of the source (they are mixed down to one). */
  readonly channels: number
  /** The source encoding, e.g. `wav/pcm16`, `wav/mulaw`, `mulaw`, `mp3`. */
  readonly format: string
}

/**
 * Sample rates a clip may have. Below 8 kHz a clip cannot fill even the telephone band; above
 * 48 kHz is studio audio that gains nothing on a call.
 */
export const SUPPORTED_SAMPLE_RATES: ReadonlyArray<number> = [
  8000,
  11025,
  12000,
  16000,
  22050,
  24000,
  32000,
  44100,
  48000
]

export const durationMsOf = (frames: number, sampleRate: number) => Math.round((frames * 1000) / sampleRate)
