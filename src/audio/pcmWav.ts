/** A mono PCM16 WAV file (44-byte canonical header) holding `chunks` back to back. */
export const monoPcm16Wav = (chunks: ReadonlyArray<Int16Array>, sampleRate: number): Uint8Array => {
  const samples = chunks.reduce((total, chunk) => total + chunk.length, 0)
  const out = new Uint8Array(44 + samples * 2)
  const view = new DataView(out.buffer)
  const ascii = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) view.setUint8(at + i, text.charCodeAt(i))
  }
  ascii(0, "RIFF")
  view.setUint32(4, 36 + samples * 2, true)
  ascii(8, "WAVE")
  ascii(12, "fmt ")
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true)
  view.setUint16(22, 1, true)
  view.setUint32(24, sampleRate, true)
  view.setUint32(28, sampleRate * 2, true)
  view.setUint16(32, 2, true)
  view.setUint16(34, 16, true)
  ascii(36, "data")
  view.setUint32(40, samples * 2, true)
  let at = 44
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i++, at += 2) view.setInt16(at, chunk[i]!, true)
  }
  return out
}
