import { Layer } from "effect"
import { ModelSettingsLive } from "../llm/modelSettings.ts"
import { StorageLive } from "../storage/mod.ts"
import { TelephonyConfigsAreaLive } from "../telephony/mod.ts"
import { CampaignsLive } from "./campaigns.ts"
import { ContactImportsLive } from "./contactImports.ts"

/**
 * Campaigns with what they are built on: uploaded files, their imports and telephony
 * configurations, and the model settings a campaign's calls need before it may start.
 */
export const CampaignsAreaLive = CampaignsLive.pipe(
  Layer.provideMerge(ContactImportsLive),
  Layer.provideMerge(Layer.mergeAll(StorageLive, TelephonyConfigsAreaLive)),
  Layer.provide(ModelSettingsLive)
)
