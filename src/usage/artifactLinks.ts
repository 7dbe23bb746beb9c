/**
 * Links to a run's recording and transcript. They are signed and expire, so a link copied out of
 * a report stops working (unlike never-expiring public tokens). The server that serves
 * `/api/v1/artifacts/{run_id}/{kind}` verifies them with `SecretBox.verify(ARTIFACT_LINK_PURPOSE,
 * artifactLinkMessage(path, expires), sig)` and refuses them once `expires` has passed.
 */
export type ArtifactKind = "recording" | "transcript"

export const ARTIFACT_LINK_PURPOSE = "artifact"
export const ARTIFACT_LINK_TTL_SECONDS = 15 * 60

export const artifactPath = (runId: number, kind: ArtifactKind): string => `/api/v1/artifacts/${runId}/${kind}`

/** What is signed: the path and the expiry (Unix seconds), so neither can be changed. */
export const artifactLinkMessage = (path: string, expires: number): string => `${path}?expires=${expires}`

export const artifactLinkUrl = (publicUrl: string, path: string, expires: number, signature: string): string =>
  `${publicUrl}${path}?expires=${expires}&sig=${encodeURIComponent(signature)}`
