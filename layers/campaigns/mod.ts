import { Layer } from "effect"
import { ModelSettingsLive } from "../llm/modelSettings.ts"
import { StorageLive } from "../storage/mod.ts"
import { TelephonyConfigsAreaLive } from "../telephony/mod.ts"
import { CampaignsLive } from "./campaigns.ts"
import { ContactImportsLive } from "./contactImports.ts"
import { CampaignDoorbellLive } from "./scheduler/campaignDoorbell.ts"
import { DialerRepoLive } from "./scheduler/dialerRepo.ts"

/**
 * Campaigns with what they are built on: uploaded files, their imports and telephony
 * configurations, the model settings a campaign's calls need before it may start, and the
 * dialer's doorbell, which every lifecycle command rings, and its rows, which progress reads the live figures from.
 */
export const CampaignsAreaLive = CampaignsLive.pipe(
  Layer.provideMerge(ContactImportsLive),
  Layer.provideMerge(Layer.mergeAll(StorageLive, TelephonyConfigsAreaLive, CampaignDoorbellLive, DialerRepoLive)),
  Layer.provide(ModelSettingsLive)
)
