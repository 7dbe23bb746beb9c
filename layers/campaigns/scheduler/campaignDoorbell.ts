import { Effect, Layer, PubSub } from "effect"
import { CampaignDoorbell, Ring } from "../../../services/CampaignDoorbell.ts"

/** Sliding: a ring nobody answered in time is worth less than the newest one (the scheduler also polls). */
const RINGS_KEPT = 1024

export const CampaignDoorbellLive = Layer.scoped(
  CampaignDoorbell,
  Effect.gen(function*() {
    const rings = yield* Effect.acquireRelease(PubSub.sliding<Ring>(RINGS_KEPT), PubSub.shutdown)
    return CampaignDoorbell.of({
      rings,
      changed: (campaignId) => PubSub.publish(rings, Ring.Changed({ campaignId })).pipe(Effect.asVoid),
      slotFreed: (campaignId) => PubSub.publish(rings, Ring.SlotFreed({ campaignId })).pipe(Effect.asVoid)
    })
  })
)
