import * as fs from "node:fs/promises"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
// @ts-expect-error s3rver ships no type declarations
import S3rver from "s3rver"

export interface LocalS3 {
  readonly endpoint: string
  readonly bucket: string
  /** Settings that point talkgraph's S3 storage at this server. */
  readonly env: Record<string, string>
  readonly close: () => Promise<void>
}

/** An S3-compatible server (s3rver) on a random loopback port, storing under a temp dir. */
export const startS3 = async (bucket = "talkgraph-test"): Promise<LocalS3> => {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-s3-"))
  const server = new S3rver({ port: 0, address: "127.0.0.1", directory, silent: true, configureBuckets: [{ name: bucket }] })
  const address = (await server.run()) as AddressInfo
  const endpoint = `http://127.0.0.1:${address.port}`
  return {
    endpoint,
    bucket,
    env: {
      STORAGE_URL: `s3://${bucket}/uploads`,
      S3_ENDPOINT: endpoint,
      S3_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER"
    },
    close: async () => {
      await server.close()
      await fs.rm(directory, { recursive: true, force: true })
    }
  }
}
