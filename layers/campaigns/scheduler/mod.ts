import { Layer } from "effect"
import { TelephonyLive } from "../../telephony/telephony.ts"
import { AttemptRefsLive } from "./attemptRefs.ts"
import { CampaignCallsLive } from "./campaignCalls.ts"
import { CampaignSchedulerLive } from "./campaignScheduler.ts"
import { DialerRepoLive } from "./dialerRepo.ts"
import { SchedulerSettingsLive } from "./schedulerSettings.ts"

/**
 * Campaign call webhooks and live status, with the carriers, settings and rows the dialer shares.
 * The doorbell comes from below (`CampaignsAreaLive`): the campaigns ring it too, and there is one.
 */
export const CampaignCallsAreaLive = CampaignCallsLive.pipe(
  Layer.provideMerge(Layer.mergeAll(TelephonyLive, SchedulerSettingsLive, DialerRepoLive, AttemptRefsLive))
)

/** The dialer itself: runs only in a serving process, where carriers can reach the callbacks it hands out. */
export const DialerLive = CampaignSchedulerLive
