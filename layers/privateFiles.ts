import * as fs from "node:fs/promises"

/**
 * Modes for what talkgraph keeps on disk (the data dir, local storage, the secret key file): the
 * owner alone may read them, whatever umask the process was started with. Other users of the
 * machine must not read recordings, contact lists or the database, nor write into them.
 */
export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

/** The umask of a serving process: anything created without an explicit mode is owner-only too. */
export const PRIVATE_UMASK = 0o077

/** Creates `dir` (and missing parents) owner-only, and tightens it if it existed with looser modes. */
export const ensurePrivateDir = async (dir: string) => {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  await fs.chmod(dir, PRIVATE_DIR_MODE)
}

/** Tightens an existing file to owner-only (a key file written by an older version). */
export const ensurePrivateFile = (file: string) => fs.chmod(file, PRIVATE_FILE_MODE)
