/**
 * A PCM16 WAV file (44-byte canonical header) of `frames` frames of `channels` samples each; the
 * caller fills the samples after `PCM_WAV_HEADER_BYTES`, little-endian, interleaved.
 */
export const PCM_WAV_HEADER_BYTES = 44

export const emptyPcm16Wav = (frames: number, sampleRate: number, channels: 1 | 2): Uint8Array => {
  const dataBytes = frames * channels * 2
  const out = new Uint8Array(PCM_WAV_HEADER_BYTES + dataBytes)
  const view = new DataView(out.buffer)
  const ascii = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) view.setUint8(at + i, text.charCodeAt(i))
  }
  ascii(0, "RIFF")
  view.setUint32(4, 36 + dataBytes, true)
  ascii(8, "WAVE")
  ascii(12, "fmt ")
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true)
  view.setUint16(22, channels, true)
  view.setUint32(24, sampleRate, true)
  view.setUint32(28, sampleRate * channels * 2, true)
  view.setUint16(32, channels * 2, true)
  view.setUint16(34, 16, true)
  ascii(36, "data")
  view.setUint32(40, dataBytes, true)
  return out
}

/** A mono PCM16 WAV file holding `chunks` back to back. */
export const monoPcm16Wav = (chunks: ReadonlyArray<Int16Array>, sampleRate: number): Uint8Array => {
  const samples = chunks.reduce((total, chunk) => total + chunk.length, 0)
  const out = emptyPcm16Wav(samples, sampleRate, 1)
  const view = new DataView(out.buffer)
  let at = PCM_WAV_HEADER_BYTES
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i++, at += 2) view.setInt16(at, chunk[i]!, true)
  }
  return out
}
