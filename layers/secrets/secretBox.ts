import { Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { AppConfig } from "../../services/AppConfig.ts"
import { SecretBox, SecretUnreadable } from "../../services/SecretBox.ts"
import { ensurePrivateDir, ensurePrivateFile, PRIVATE_FILE_MODE } from "../privateFiles.ts"

const derive = (master: Buffer, purpose: string): Buffer =>
  Buffer.from(crypto.hkdfSync("sha256", master, Buffer.alloc(0), `talkgraph:${purpose}`, 32))

/** A SecretBox over a master secret; each use gets its own derived key. */
export const makeSecretBox = (master: string) => {
  const root = Buffer.from(master, "utf8")
  const hashKey = derive(root, "token-hash")
  const encryptionKey = derive(root, "encryption")
  const signingKeys = new Map<string, Buffer>()
  const signingKey = (purpose: string) => {
    let key = signingKeys.get(purpose)
    if (!key) {
      key = derive(root, `sign:${purpose}`)
      signingKeys.set(purpose, key)
    }
    return key
  }
  const sign = (purpose: string, message: string) =>
    crypto.createHmac("sha256", signingKey(purpose)).update(message).digest("base64url")
  return SecretBox.of({
    tokenHash: (token) => crypto.createHmac("sha256", hashKey).update(token).digest("hex"),
    encrypt: (plaintext) => {
      const nonce = crypto.randomBytes(12)
      const cipher = crypto.createCipheriv("aes-256-gcm", encryptionKey, nonce)
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      return ["v1", nonce.toString("base64url"), body.toString("base64url"), cipher.getAuthTag().toString("base64url")]
        .join(".")
    },
    decrypt: (sealed) =>
      Effect.try({
        try: () => {
          const [version, nonce, body, tag] = sealed.split(".")
          if (version !== "v1" || nonce === undefined || body === undefined || tag === undefined) {
            throw new Error("unknown format")
          }
          const decipher = crypto.createDecipheriv("aes-256-gcm", encryptionKey, Buffer.from(nonce, "base64url"))
          decipher.setAuthTag(Buffer.from(tag, "base64url"))
          return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")
        },
        catch: () =>
          new SecretUnreadable({ message: "a stored secret cannot be decrypted (was TALKGRAPH_SECRET_KEY changed?)" })
      }),
    sign,
    verify: (purpose, message, signature) => {
      const expected = Buffer.from(sign(purpose, message))
      const given = Buffer.from(signature)
      return expected.length === given.length && crypto.timingSafeEqual(expected, given)
    }
  })
}

/**
 * Embedded installs keep a generated key in the data dir so a newcomer configures nothing;
 * with PostgreSQL the key must come from the environment (config refuses to start otherwise).
 * The file is the owner's alone (one written looser by an older version is tightened).
 */
const loadOrCreateKeyFile = (dataDir: string) =>
  Effect.promise(async () => {
    const file = path.join(dataDir, "secret.key")
    await ensurePrivateDir(dataDir)
    try {
      const key = (await fs.readFile(file, "utf8")).trim()
      await ensurePrivateFile(file)
      return key
    } catch {
      const generated = crypto.randomBytes(32).toString("hex")
      await fs.writeFile(file, generated, { mode: PRIVATE_FILE_MODE, flag: "wx" }).catch(() => undefined)
      return (await fs.readFile(file, "utf8")).trim()
    }
  })

export const SecretBoxLive = Layer.effect(
  SecretBox,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const master = Option.isSome(config.secretKey)
      ? Redacted.value(config.secretKey.value)
      : yield* loadOrCreateKeyFile(config.dataDir)
    return makeSecretBox(master)
  })
)
