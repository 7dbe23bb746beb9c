import { S3Client } from "@aws-sdk/client-s3"
import { Option } from "effect"
import { credentialsOf, type StorageConfigShape } from "../../src/storage/storageConfig.ts"

/** The S3 client for the configured endpoint, region, addressing style and credentials. */
export const makeS3Client = (config: StorageConfigShape) => {
  const credentials = credentialsOf(config)
  return new S3Client({
    region: config.s3Region,
    forcePathStyle: config.s3ForcePathStyle,
    ...(Option.isSome(config.s3Endpoint) ? { endpoint: config.s3Endpoint.value } : {}),
    ...(credentials ? { credentials } : {})
  })
}
