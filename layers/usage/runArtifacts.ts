import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { type ArtifactLinkRequest, RunArtifacts } from "../../services/RunArtifacts.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { Storage } from "../../services/Storage.ts"
import { Forbidden, NotFound } from "../../src/domain/errors.ts"
import { ownerOfKey } from "../../src/storage/keyOwner.ts"
import { artifactLinkCheck, artifactPresentation, isArtifactKind } from "../../src/usage/artifactLinks.ts"

/** Long enough for the client to follow the redirect, too short to be worth passing around. */
const REDIRECT_TTL_SECONDS = 60

export const RunArtifactsLive = Layer.effect(
  RunArtifacts,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    const storage = yield* Storage

    const open = Effect.fn("RunArtifacts.open")(function*(link: ArtifactLinkRequest) {
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const status = artifactLinkCheck(secrets.verify, link, now)
      if (status === "invalid") {
        return yield* new Forbidden({ message: "This link is not valid; take a new one from the usage report" })
      }
      if (status === "expired") {
        return yield* new Forbidden({ message: "This link has expired; take a new one from the usage report" })
      }
      // Only a link this server signed gets here, so its run id is digits and its kind is known.
      const runId = Number(link.runId)
      const missing = new NotFound({ resource: "Run artifact", id: `${runId}/${link.kind}` })
      if (!isArtifactKind(link.kind)) return yield* missing
      const [run] = yield* sql<
        { organization_id: number; recording_key: string | null; transcript_key: string | null }
      >`
        SELECT organization_id, recording_key, transcript_key FROM runs WHERE id = ${runId}`.pipe(Effect.orDie)
      const key = link.kind === "recording" ? run?.recording_key : run?.transcript_key
      // A key outside the run's own organization is never served, whatever the row says.
      if (!run || !key || ownerOfKey(key) !== run.organization_id) return yield* missing
      const presentation = artifactPresentation(runId, link.kind)
      const redirect = yield* storage.presignDownload(key, { ...presentation, expiresInSeconds: REDIRECT_TTL_SECONDS })
      if (Option.isSome(redirect)) return { _tag: "Redirect" as const, url: redirect.value }
      const size = yield* storage.size(key).pipe(
        Effect.catchTags({ NotFound: () => Effect.fail(missing), UpstreamFailed: Effect.die })
      )
      return {
        _tag: "Served" as const,
        ...presentation,
        size,
        body: (range?: { start: number; end: number }) => storage.download(key, range)
      }
    })

    return RunArtifacts.of({ open })
  })
)
