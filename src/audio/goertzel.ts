/** The Goertzel coefficient of `frequency` at `sampleRate`: compute it once per frequency. */
export const goertzelCoefficient = (frequency: number, sampleRate: number) =>
  2 * Math.cos((2 * Math.PI * frequency) / sampleRate)

/**
 * The power of one frequency in a block of samples (Goertzel's algorithm): a pure tone's power is
 * N/2 times its energy in the block, which is how callers tell a tone from a mixture.
 */
export const goertzelPower = (block: Float64Array, coefficient: number) => {
  let previous = 0
  let beforePrevious = 0
  for (const sample of block) {
    const current = sample + coefficient * previous - beforePrevious
    beforePrevious = previous
    previous = current
  }
  return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
}
