/**
 * Links to a run's recording and transcript. They are signed and expire, so a link copied out of
 * a report stops working (unlike never-expiring public tokens). `GET /api/v1/artifacts/{run_id}/{kind}`
 * serves them once `artifactLinkCheck` finds the signature good and the expiry ahead.
 */
export type ArtifactKind = "recording" | "transcript"

export const ARTIFACT_LINK_PURPOSE = "artifact"
export const ARTIFACT_LINK_TTL_SECONDS = 15 * 60

export const artifactPath = (runId: number | string, kind: ArtifactKind | string): string =>
  `/api/v1/artifacts/${runId}/${kind}`

/** What is signed: the path and the expiry (Unix seconds), so neither can be changed. */
export const artifactLinkMessage = (path: string, expires: number | string): string => `${path}?expires=${expires}`

export const artifactLinkUrl = (publicUrl: string, path: string, expires: number, signature: string): string =>
  `${publicUrl}${path}?expires=${expires}&sig=${encodeURIComponent(signature)}`

type ArtifactLinkStatus = "valid" | "invalid" | "expired"

/**
 * Judges a link as it arrived: the path parts and query values exactly as sent (a run id written
 * `012` is not the run signed as `12`). The signature is checked before anything is looked up,
 * so a forged link learns nothing about which runs exist.
 */
export const artifactLinkCheck = (
  verify: (purpose: string, message: string, signature: string) => boolean,
  link: {
    readonly runId: string
    readonly kind: string
    readonly expires: string | undefined
    readonly sig: string | undefined
  },
  nowSeconds: number
): ArtifactLinkStatus => {
  if (link.expires === undefined || link.sig === undefined || !/^\d{1,12}$/.test(link.expires)) return "invalid"
  if (
    !verify(ARTIFACT_LINK_PURPOSE, artifactLinkMessage(artifactPath(link.runId, link.kind), link.expires), link.sig)
  ) return "invalid"
  return Number(link.expires) < nowSeconds ? "expired" : "valid"
}

export const isArtifactKind = (kind: string): kind is ArtifactKind => kind === "recording" || kind === "transcript"

/** How a download presents itself: its media type and the file name a browser saves it under. */
export const artifactPresentation = (runId: number, kind: ArtifactKind) =>
  kind === "recording"
    ? { contentType: "audio/wav", fileName: `run-${runId}-recording.wav` }
    : { contentType: "application/json", fileName: `run-${runId}-transcript.json` }
