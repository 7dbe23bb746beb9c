import { Effect, Either, Option, Redacted } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { checkS3Storage } from "../layers/storage/s3Check.ts"
import type { StorageConfigShape } from "../src/storage/storageConfig.ts"
import { type LocalS3, startS3 } from "./support/s3.ts"

const settings = (endpoint: string, secret = "S3RVER"): StorageConfigShape => ({
  s3Endpoint: Option.some(endpoint),
  s3Region: "us-east-1",
  s3ForcePathStyle: true,
  accessKeyId: Option.some(Redacted.make("S3RVER")),
  secretAccessKey: Option.some(Redacted.make(secret)),
  uploadMaxBytes: 1024,
  uploadUrlTtlSeconds: 60,
  storageQuotaBytes: 0
})

const check = (storageUrl: string, config: StorageConfigShape) =>
  Effect.runPromise(Effect.either(checkS3Storage(storageUrl, config)))

/**
 * An S3 endpoint that refuses every request the way AWS does: the status and the XML error body
 * of https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html.
 */
const startRefusingS3 = async (status: number, code: string, message: string) => {
  const server = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      response.writeHead(status, { "content-type": "application/xml", "x-amz-request-id": "0A49CE4060975EAC" })
      response.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>0A49CE4060975EAC</RequestId></Error>`
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(resolve))
  }
}

describe("the S3 storage check at start", () => {
  let s3: LocalS3
  beforeAll(async () => {
    s3 = await startS3()
  })
  afterAll(async () => {
    await s3?.close()
  })

  it("passes against a store that takes the test write", async () => {
    expect(Either.isRight(await check(`s3://${s3.bucket}/uploads`, settings(s3.endpoint)))).toBe(true)
  })

  it.each([
    [
      403,
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided.",
      "refused AWS_SECRET_ACCESS_KEY for that access key (SignatureDoesNotMatch)"
    ],
    [
      403,
      "AccessDenied",
      "Access Denied",
      "the S3 credentials may not write to s3://talkgraph/uploads/ (AccessDenied)"
    ],
    [
      301,
      "PermanentRedirect",
      "The bucket you are attempting to access must be addressed using the specified endpoint.",
      "the bucket of s3://talkgraph/uploads/ is in another region than S3_REGION"
    ]
  ])("names a %i %s refusal", async (status, code, message, expected) => {
    const refusing = await startRefusingS3(status, code, message)
    try {
      const result = await check("s3://talkgraph/uploads", settings(refusing.endpoint, "wrong-secret-6120"))
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left.message).toContain(expected)
        expect(result.left.message).not.toContain("wrong-secret-6120")
      }
    } finally {
      await refusing.close()
    }
  })
})
