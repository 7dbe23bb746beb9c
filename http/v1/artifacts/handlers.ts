import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { RunArtifacts } from "../../../services/RunArtifacts.ts"
import { Api } from "../../api.ts"
import { artifactResponse } from "./artifactResponse.ts"

const serve = ({ path, urlParams }: {
  readonly path: { readonly run_id: string; readonly kind: string }
  readonly urlParams: { readonly expires?: string | undefined; readonly sig?: string | undefined }
}) =>
  Effect.gen(function*() {
    const artifacts = yield* RunArtifacts
    const request = yield* HttpServerRequest.HttpServerRequest
    const delivery = yield* artifacts.open({
      runId: path.run_id,
      kind: path.kind,
      expires: urlParams.expires,
      sig: urlParams.sig
    })
    return yield* artifactResponse(delivery, request.headers)
  })

export const ArtifactsHandlers = HttpApiBuilder.group(
  Api,
  "artifacts",
  (handlers) => Effect.succeed(handlers.handleRaw("download", serve).handleRaw("describe", serve))
)
