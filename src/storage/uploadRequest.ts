import { Either } from "effect"
import { PayloadTooLarge } from "../domain/errors.ts"
import { mediaTypeOf, newUploadKey } from "./uploadKeys.ts"

/** What a client declares about the file it is about to upload; every field may be left out. */
export interface UploadRequest {
  readonly file_name?: string | undefined
  readonly file_size?: number | undefined
  readonly content_type?: string | undefined
}

/** The terms an upload URL is signed with. */
export interface UploadTerms {
  readonly key: string
  readonly contentType: string
  /** The most the URL takes: the declared size when there is one, else the upload limit. */
  readonly maxBytes: number
  /** A declared size is exact: the URL takes that many bytes and no other number. */
  readonly exactBytes: number | undefined
}

/**
 * The key and limits of a new upload of the organization: a declared size over the limit is refused
 * before any URL exists; an undeclared content type is CSV's.
 */
export const uploadTerms = (
  organizationId: number,
  request: UploadRequest | undefined,
  limitBytes: number
): Either.Either<UploadTerms, PayloadTooLarge> => {
  const declared = request?.file_size
  if (declared !== undefined && declared > limitBytes) {
    return Either.left(new PayloadTooLarge({ message: `The file is larger than the ${limitBytes}-byte upload limit` }))
  }
  return Either.right({
    key: newUploadKey(organizationId, request?.file_name),
    contentType: request?.content_type === undefined ? "text/csv" : mediaTypeOf(request.content_type),
    maxBytes: declared ?? limitBytes,
    exactBytes: declared
  })
}
