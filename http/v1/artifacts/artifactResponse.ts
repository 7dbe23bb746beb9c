import { type Headers, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { ArtifactDelivery } from "../../../services/RunArtifacts.ts"
import { RangeNotSatisfiable } from "../../../src/domain/errors.ts"
import { byteRangeOf, contentRange } from "../../../src/storage/byteRanges.ts"

/**
 * A delivery as HTTP: a redirect to the store, or the bytes with range support (RFC 9110 §14).
 * `If-Range` would need validators this response does not carry, so a request with one gets the
 * whole representation, as §13.1.5 says a server that cannot evaluate it must.
 */
export const artifactResponse = (delivery: ArtifactDelivery, headers: Headers.Headers) =>
  Effect.gen(function*() {
    if (delivery._tag === "Redirect") {
      return HttpServerResponse.redirect(delivery.url, { status: 302, headers: { "cache-control": "no-store" } })
    }
    const answer = headers["if-range"] === undefined
      ? byteRangeOf(headers["range"], delivery.size)
      : byteRangeOf(undefined, delivery.size)
    if (answer._tag === "Unsatisfiable") {
      return yield* new RangeNotSatisfiable({
        message: `The range is outside the file (${delivery.size} bytes)`,
        size: delivery.size
      })
    }
    const common = {
      "accept-ranges": "bytes",
      "content-disposition": `attachment; filename="${delivery.fileName}"`,
      "cache-control": "private, no-cache",
      "x-content-type-options": "nosniff"
    }
    if (answer._tag === "Partial") {
      return HttpServerResponse.stream(delivery.body(answer), {
        status: 206,
        contentType: delivery.contentType,
        contentLength: answer.end - answer.start + 1,
        headers: { ...common, "content-range": contentRange(answer, delivery.size) }
      })
    }
    return HttpServerResponse.stream(delivery.body(), {
      status: 200,
      contentType: delivery.contentType,
      contentLength: delivery.size,
      headers: common
    })
  })
