import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
// @ts-expect-error s3rver ships no type declarations
import S3rver from "s3rver"
import { s3ErrorXml, verifySignatureV4 } from "./s3Signature.ts"

export interface LocalS3 {
  readonly endpoint: string
  readonly bucket: string
  /** Settings that point talkgraph's S3 storage at this server. */
  readonly env: Record<string, string>
  readonly close: () => Promise<void>
}

const ACCESS_KEY_ID = "S3RVER"
const SECRET_ACCESS_KEY = "S3RVER"

/**
 * A gate in front of s3rver that checks every request's Signature Version 4 (header or presigned
 * query) and a presigned URL's expiry, as S3 does, and passes what S3 would accept on unchanged.
 */
const signatureGate = (upstreamPort: number) =>
  http.createServer((request, response) => {
    if (request.method !== "OPTIONS") {
      const verdict = verifySignatureV4(
        { method: request.method ?? "GET", url: request.url ?? "/", headers: request.headers },
        new Map([[ACCESS_KEY_ID, SECRET_ACCESS_KEY]]),
        Date.now()
      )
      if (!verdict.ok) {
        request.resume()
        response.writeHead(403, { "content-type": "application/xml" }).end(s3ErrorXml(verdict.code, verdict.message))
        return
      }
    }
    const upstream = http.request(
      { host: "127.0.0.1", port: upstreamPort, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      }
    )
    upstream.on("error", () => response.destroy())
    request.pipe(upstream)
  })

/** An S3-compatible server (s3rver behind a signature check) on a random loopback port, storing under a temp dir. */
export const startS3 = async (bucket = "talkgraph-test"): Promise<LocalS3> => {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-s3-"))
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }]
  })
  const upstream = (await server.run()) as AddressInfo
  const gate = signatureGate(upstream.port)
  await new Promise<void>((resolve) => gate.listen(0, "127.0.0.1", resolve))
  const endpoint = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`
  return {
    endpoint,
    bucket,
    env: {
      STORAGE_URL: `s3://${bucket}/uploads`,
      S3_ENDPOINT: endpoint,
      S3_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY
    },
    close: async () => {
      gate.closeAllConnections()
      await new Promise<void>((resolve) => gate.close(() => resolve()))
      await server.close()
      await fs.rm(directory, { recursive: true, force: true })
    }
  }
}
