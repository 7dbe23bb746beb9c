import { Clock, Effect } from "effect"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import type { MediaSource } from "../../services/VoiceCalls.ts"
import { mediaStreamUrl, mediaToken } from "../../src/telephony/mediaToken.ts"

/** The signed media-stream links a run's audio connects to, each valid for a given time from now. */
export const makeMediaLinks = Effect.gen(function*() {
  const secrets = yield* SecretBox
  const publicUrl = yield* PublicUrl

  const link = (source: MediaSource, runId: number, validSeconds: number) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const expires = Math.floor(now / 1000) + validSeconds
      return {
        url: mediaStreamUrl(publicUrl, source, runId, mediaToken(secrets.sign, runId, expires)),
        expiresAt: new Date(expires * 1000)
      }
    })

  return { link }
})

export type MediaLinks = Effect.Effect.Success<typeof makeMediaLinks>
