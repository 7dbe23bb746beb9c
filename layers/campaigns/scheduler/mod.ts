import { Layer } from "effect"
import { TelephonyLive } from "../../telephony/telephony.ts"
import { CampaignCallsLive } from "./campaignCalls.ts"
import { CampaignSchedulerLive } from "./campaignScheduler.ts"
import { CampaignWakeupsLive } from "./campaignWakeups.ts"
import { SchedulerSettingsLive } from "./schedulerSettings.ts"

/** Campaign call webhooks and live status, with the carriers, settings and wake-ups the dialer shares. */
export const CampaignCallsAreaLive = CampaignCallsLive.pipe(
  Layer.provideMerge(Layer.mergeAll(TelephonyLive, CampaignWakeupsLive, SchedulerSettingsLive))
)

/** The dialer itself: runs only in a serving process, where carriers can reach the callbacks it hands out. */
export const DialerLive = CampaignSchedulerLive
