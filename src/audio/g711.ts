/**
 * G.711 μ-law and A-law (ITU-T G.711), as tables: decoding is one lookup per byte, and μ-law
 * encoding one lookup per 16-bit sample (a 64 KiB table built once).
 */
const muLawSample = (byte: number) => {
  const u = ~byte & 0xff
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << ((u >> 4) & 0x07)) - 0x84
  return u & 0x80 ? -magnitude : magnitude
}

const aLawSample = (byte: number) => {
  const a = byte ^ 0x55
  const segment = (a & 0x70) >> 4
  let magnitude = (a & 0x0f) << 4
  if (segment === 0) magnitude += 8
  else magnitude = (magnitude + 0x108) << (segment - 1)
  return a & 0x80 ? magnitude : -magnitude
}

/** 16-bit linear value of each μ-law byte. */
export const MU_LAW_DECODE: Int16Array = Int16Array.from({ length: 256 }, (_, byte) => muLawSample(byte))
/** 16-bit linear value of each A-law byte. */
export const A_LAW_DECODE: Int16Array = Int16Array.from({ length: 256 }, (_, byte) => aLawSample(byte))

const BIAS = 0x84
const CLIP = 32635

const muLawByte = (sample: number) => {
  const sign = sample < 0 ? 0x80 : 0
  let magnitude = Math.min(Math.abs(sample), CLIP) + BIAS
  let exponent = 7
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f
  magnitude = ~(sign | (exponent << 4) | mantissa) & 0xff
  return magnitude
}

let encodeTable: Uint8Array | undefined

/** The μ-law byte of each 16-bit sample, indexed by the sample + 32768. */
const muLawEncodeTable = () => {
  encodeTable ??= Uint8Array.from({ length: 65536 }, (_, index) => muLawByte(index - 32768))
  return encodeTable
}

/** Encodes 16-bit samples as μ-law bytes. */
export const encodeMuLaw = (samples: Int16Array): Uint8Array => {
  const table = muLawEncodeTable()
  const out = new Uint8Array(samples.length)
  for (let i = 0; i < samples.length; i++) out[i] = table[samples[i]! + 32768]!
  return out
}
