import { Context, type Effect, type Stream } from "effect"
import type { Forbidden, NotFound, UpstreamFailed } from "../src/domain/errors.ts"
import type { ByteRange } from "./Storage.ts"

/** A signed artifact link as it arrived (path parts and query values unparsed). */
export interface ArtifactLinkRequest {
  readonly runId: string
  readonly kind: string
  readonly expires: string | undefined
  readonly sig: string | undefined
}

export type ArtifactDelivery =
  /** Storage hands the object out itself (S3): a short-lived URL to send the client to. */
  | { readonly _tag: "Redirect"; readonly url: string }
  /** This process serves the object (local storage), whole or a range of it. */
  | {
    readonly _tag: "Served"
    readonly contentType: string
    readonly fileName: string
    readonly size: number
    readonly body: (range?: ByteRange) => Stream.Stream<Uint8Array, UpstreamFailed>
  }

/**
 * A run's recording and transcript behind the signed links usage reports hand out. A link that is
 * not ours or has expired is Forbidden before anything is looked up; a good link to a run, or an
 * artifact, that is not there is NotFound.
 */
export interface RunArtifactsShape {
  readonly open: (link: ArtifactLinkRequest) => Effect.Effect<ArtifactDelivery, Forbidden | NotFound>
}

export class RunArtifacts extends Context.Tag("talkgraph/RunArtifacts")<RunArtifacts, RunArtifactsShape>() {}
