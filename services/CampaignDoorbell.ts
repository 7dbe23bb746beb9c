import { Context, Data, type Effect, type PubSub } from "effect"
import type { CampaignId } from "../src/domain/ids.ts"

/** What a ring says: a campaign's state changed (its actor may have to start or stop), or one of its calls ended. */
export type Ring = Data.TaggedEnum<{
  Changed: { readonly campaignId: CampaignId }
  SlotFreed: { readonly campaignId: CampaignId }
}>

export const Ring = Data.taggedEnum<Ring>()

/**
 * The dialer's doorbell: whatever in this process changes what a campaign's actor should do rings
 * it, and `CampaignScheduler` answers at once instead of at its next poll. Between processes the
 * same rings travel as PostgreSQL NOTIFY (`talkgraph_campaigns`) and are answered the same way;
 * the embedded database has no NOTIFY, and one process, so the in-process ring is all it needs.
 */
export interface CampaignDoorbellShape {
  /** The campaign was started, paused, resumed or cancelled here. */
  readonly changed: (campaignId: CampaignId) => Effect.Effect<void>
  /** One of the campaign's calls ended here: a slot is free for its actor. */
  readonly slotFreed: (campaignId: CampaignId) => Effect.Effect<void>
  /** Every ring in this process, for the scheduler to answer. */
  readonly rings: PubSub.PubSub<Ring>
}

export class CampaignDoorbell
  extends Context.Tag("talkgraph/CampaignDoorbell")<CampaignDoorbell, CampaignDoorbellShape>()
{}
