import { Context, type Effect, type Stream } from "effect"
import type { NotFound } from "../src/domain/errors.ts"
import type { CampaignId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { CampaignProgress } from "./Campaigns.ts"

/**
 * A campaign's progress as it changes, for consoles watching it. However many follow one campaign,
 * a process reads its progress once per change: when the campaign's doorbell rings here (a command,
 * an ended call) and, while anyone follows, at a modest interval for what other processes changed.
 */
export interface CampaignProgressFeedShape {
  /**
   * The progress now, then each time it changes, ending after the campaign reaches a final state.
   * NotFound (before the stream) for a campaign outside the caller's organization.
   */
  readonly follow: (
    principal: Principal,
    campaignId: CampaignId
  ) => Effect.Effect<Stream.Stream<CampaignProgress>, NotFound>
}

export class CampaignProgressFeed
  extends Context.Tag("talkgraph/CampaignProgressFeed")<CampaignProgressFeed, CampaignProgressFeedShape>()
{}
