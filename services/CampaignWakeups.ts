import { Context, type Effect, type PubSub } from "effect"

/**
 * In-process wake-ups for campaign actors: a callback handled here frees a slot a local actor is
 * waiting for. Across processes the same news travels by PostgreSQL NOTIFY; the embedded
 * database cannot deliver NOTIFY, and there is only one process then, so this is enough.
 */
export interface CampaignWakeupsShape {
  readonly publish: (campaignId: number) => Effect.Effect<void>
  readonly changes: PubSub.PubSub<number>
}

export class CampaignWakeups
  extends Context.Tag("talkgraph/CampaignWakeups")<CampaignWakeups, CampaignWakeupsShape>()
{}
