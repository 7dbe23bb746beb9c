/**
 * The discrete Fourier transform of a length whose prime factors are small, by mixed-radix
 * Stockham stages (decimation in frequency, output in natural order): Whisper's 400-sample frames
 * (2⁴·5²) are not a power of two. A plain DFT takes 400 complex products per output point; these
 * stages take 2 + 2 + 2 + 2 + 5 + 5 = 18, for each of the 800 frames of a prediction.
 */
export interface Spectrum {
  readonly re: Float64Array
  readonly im: Float64Array
}

const factorsOf = (size: number) => {
  const factors: Array<number> = []
  let rest = size
  for (let p = 2; rest > 1; p++) {
    while (rest % p === 0) {
      factors.push(p)
      rest /= p
    }
  }
  return factors
}

/**
 * A transform of `size` points. The twiddle factors and the two work buffers are made once; the
 * answer's arrays are those buffers, valid until the next call.
 */
export const fftOfSize = (size: number): (re: Float64Array, im: Float64Array) => Spectrum => {
  const cos = Float64Array.from({ length: size }, (_, j) => Math.cos((2 * Math.PI * j) / size))
  const sin = Float64Array.from({ length: size }, (_, j) => -Math.sin((2 * Math.PI * j) / size))
  const factors = factorsOf(size)
  const buffers = [
    { re: new Float64Array(size), im: new Float64Array(size) },
    { re: new Float64Array(size), im: new Float64Array(size) }
  ] as const

  /** Per stage: W_p^(rk) at [k·p + r] and W_n^(jk) at [j·p + k], so the loops only multiply and add. */
  const stages = factors.map((p, index) => {
    const n = size / factors.slice(0, index).reduce((product, factor) => product * factor, 1)
    const m = n / p
    const table = (length: number, exponent: (i: number) => number) => {
      const e = Array.from({ length }, (_, i) => exponent(i) % size)
      return { cos: Float64Array.from(e, (x) => cos[x]!), sin: Float64Array.from(e, (x) => sin[x]!) }
    }
    return {
      p,
      m,
      rotation: table(p * p, (i) => ((Math.floor(i / p) * (i % p)) % p) * (size / p)),
      twiddle: table(m * p, (i) => ((Math.floor(i / p) * (i % p)) % n) * (size / n))
    }
  })

  return (re, im) => {
    if (re.length !== size || im.length !== size) throw new RangeError(`expected ${size} points`)
    let fromRe = re
    let fromIm = im
    let stride = 1
    stages.forEach(({ m, p, rotation, twiddle }, index) => {
      const to = buffers[index % 2]!
      for (let j = 0; j < m; j++) {
        for (let q = 0; q < stride; q++) {
          for (let k = 0; k < p; k++) {
            let sumRe = 0
            let sumIm = 0
            for (let r = 0; r < p; r++) {
              const at = q + stride * (j + r * m)
              const c = rotation.cos[k * p + r]!
              const s = rotation.sin[k * p + r]!
              sumRe += fromRe[at]! * c - fromIm[at]! * s
              sumIm += fromRe[at]! * s + fromIm[at]! * c
            }
            const c = twiddle.cos[j * p + k]!
            const s = twiddle.sin[j * p + k]!
            const out = q + stride * (p * j + k)
            to.re[out] = sumRe * c - sumIm * s
            to.im[out] = sumRe * s + sumIm * c
          }
        }
      }
      fromRe = to.re
      fromIm = to.im
      stride *= p
    })
    return { re: fromRe, im: fromIm }
  }
}

/**
 * |X[k]|² for k = 0 … size/2 of a real frame of even `size`, from one complex transform of half
 * the size: the even samples as real parts, the odd ones as imaginary, separated afterwards
 * (X[k] = E[k] + W^k·O[k]). Half the work of transforming the frame as complex numbers.
 */
export const realPowerSpectrumOfSize = (size: number): (frame: Float64Array) => Float64Array => {
  const half = size / 2
  const fft = fftOfSize(half)
  const re = new Float64Array(half)
  const im = new Float64Array(half)
  const power = new Float64Array(half + 1)
  const cos = Float64Array.from({ length: half + 1 }, (_, k) => Math.cos((2 * Math.PI * k) / size))
  const sin = Float64Array.from({ length: half + 1 }, (_, k) => -Math.sin((2 * Math.PI * k) / size))
  return (frame) => {
    if (frame.length !== size) throw new RangeError(`expected ${size} points`)
    for (let n = 0; n < half; n++) {
      re[n] = frame[2 * n]!
      im[n] = frame[2 * n + 1]!
    }
    const z = fft(re, im)
    for (let k = 0; k <= half; k++) {
      const a = k % half
      const b = (half - k) % half
      // E = (Z[k] + conj Z[half−k]) / 2, O = (Z[k] − conj Z[half−k]) / 2i
      const evenRe = (z.re[a]! + z.re[b]!) / 2
      const evenIm = (z.im[a]! - z.im[b]!) / 2
      const oddRe = (z.im[a]! + z.im[b]!) / 2
      const oddIm = (z.re[b]! - z.re[a]!) / 2
      const xRe = evenRe + cos[k]! * oddRe - sin[k]! * oddIm
      const xIm = evenIm + cos[k]! * oddIm + sin[k]! * oddRe
      power[k] = xRe * xRe + xIm * xIm
    }
    return power
  }
}
