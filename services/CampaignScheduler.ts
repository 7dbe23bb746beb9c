import { Context, type Effect } from "effect"

/**
 * The dialer's supervisor: one actor fiber per running campaign whose lease this process holds.
 * It needs no calls from elsewhere to work (it polls and listens for campaign changes); `wake`
 * only shortens the wait after something happened in this process.
 */
export interface CampaignSchedulerShape {
  /** The campaigns this process is dialing right now. */
  readonly held: Effect.Effect<ReadonlyArray<number>>
  /** Look at this campaign now: start its actor, or let it dial into a freed slot. */
  readonly wake: (campaignId: number) => Effect.Effect<void>
  /** This process's lease owner id, as written in `campaigns.lease_owner`. */
  readonly owner: string
}

export class CampaignScheduler
  extends Context.Tag("talkgraph/CampaignScheduler")<CampaignScheduler, CampaignSchedulerShape>()
{}
