import * as crypto from "node:crypto"

/** A recording's public id: what graphs and contact CSVs name it by, unique in its organization. */
export const RECORDING_ID = /^[A-Za-z0-9_-]{1,64}$/

export const RECORDING_ID_RULE = "letters, digits, _ and - only, 1 to 64 characters"

const ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"

/** A fresh suggestion, short enough to type into a CSV cell (8 characters of an unambiguous alphabet). */
export const newRecordingId = () => {
  const bytes = crypto.randomBytes(8)
  return Array.from(bytes, (byte) => ALPHABET[byte % ALPHABET.length]).join("")
}
