import { Config, Effect } from "effect"

interface RecordingsConfigShape {
  /** The longest clip accepted (RECORDING_MAX_SECONDS, default 60). */
  readonly maxDurationSeconds: number
  /** The largest clip file accepted (RECORDING_MAX_BYTES, default 20 MiB: a minute of 48 kHz stereo 24-bit WAV fits). */
  readonly maxBytes: number
}

export const recordingsConfig = Effect.gen(function*() {
  const shape: RecordingsConfigShape = {
    maxDurationSeconds: yield* Config.integer("RECORDING_MAX_SECONDS").pipe(
      Config.validate({
        message: "RECORDING_MAX_SECONDS must be between 1 and 600",
        validation: (n) => n >= 1 && n <= 600
      }),
      Config.withDefault(60)
    ),
    maxBytes: yield* Config.integer("RECORDING_MAX_BYTES").pipe(
      Config.validate({
        message: "RECORDING_MAX_BYTES must be between 1024 and 209715200",
        validation: (n) => n >= 1024 && n <= 200 * 1024 * 1024
      }),
      Config.withDefault(20 * 1024 * 1024)
    )
  }
  return shape
})
