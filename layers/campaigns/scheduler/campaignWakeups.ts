import { Effect, Layer, PubSub } from "effect"
import { CampaignWakeups } from "../../../services/CampaignWakeups.ts"

export const CampaignWakeupsLive = Layer.scoped(
  CampaignWakeups,
  Effect.gen(function*() {
    const changes = yield* Effect.acquireRelease(PubSub.sliding<number>(1024), PubSub.shutdown)
    return CampaignWakeups.of({
      changes,
      publish: (campaignId) => PubSub.publish(changes, campaignId).pipe(Effect.asVoid)
    })
  })
)
