import { Context, type Effect } from "effect"
import type { CampaignId } from "../src/domain/ids.ts"

/**
 * The dialer: a dialer with a lease and a doorbell, not a scheduler with a mailbox.
 *
 * - **Lease.** A running campaign is dialled by exactly one process: the one whose id is in
 *   `campaigns.lease_owner` and which renews `lease_expires_at` on every poll. That process runs
 *   one actor fiber for the campaign, which claims due contacts (`DialerRepo.claim`) and places
 *   their calls as fast as the rate, the live-call limits, the calling windows and the circuit
 *   breaker allow. A lease that lapses (its process died) is taken over by another process, whose
 *   actor rebuilds everything it needs from the database.
 * - **Doorbell.** Whatever changes what an actor should do rings `CampaignDoorbell` (a campaign
 *   started, paused, resumed or cancelled; one of its calls ended), and PostgreSQL NOTIFY carries
 *   the same rings between processes. Each ring is answered through one path, `wake`: the
 *   campaign's actor is started (if its lease can be taken) or told to look again at once.
 * - **Poll.** A backstop, not the way work starts: every `TALKGRAPH_SCHEDULER_POLL_MS` the leases
 *   are renewed, free or lapsed campaigns taken and overdue calls reconciled.
 *
 * It needs no calls from elsewhere to work; see docs/architecture.md, "A contact becomes a call".
 */
export interface CampaignSchedulerShape {
  /** The campaigns this process is dialing right now. */
  readonly held: Effect.Effect<ReadonlyArray<CampaignId>>
  /** Look at this campaign now: start its actor, or let it dial into a freed slot. */
  readonly wake: (campaignId: CampaignId) => Effect.Effect<void>
  /** This process's lease owner id, as written in `campaigns.lease_owner`. */
  readonly owner: string
}

export class CampaignScheduler
  extends Context.Tag("talkgraph/CampaignScheduler")<CampaignScheduler, CampaignSchedulerShape>()
{}
