import { Effect } from "effect"
import type { Readable } from "node:stream"
import { PayloadTooLarge } from "../../src/domain/errors.ts"

/** Reads a stored object whole, refusing it once it passes `maxBytes` (the store's size is not trusted blindly). */
export const readAll = (body: Readable, maxBytes: number) =>
  Effect.tryPromise({
    try: async () => {
      const chunks: Array<Buffer> = []
      let size = 0
      for await (const chunk of body) {
        const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array)
        size += bytes.length
        if (size > maxBytes) {
          throw new PayloadTooLarge({ message: `The clip is larger than the ${maxBytes}-byte limit` })
        }
        chunks.push(bytes)
      }
      const all = Buffer.concat(chunks)
      return new Uint8Array(all.buffer, all.byteOffset, all.byteLength)
    },
    catch: (error) => error
  }).pipe(Effect.catchAll((error) => (error instanceof PayloadTooLarge ? Effect.fail(error) : Effect.die(error))))
