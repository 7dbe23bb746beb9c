import { Layer } from "effect"
import { StorageLive } from "../storage/mod.ts"
import { TelephonyConfigsLive } from "../telephony/telephonyConfigs.ts"
import { CampaignsLive } from "./campaigns.ts"
import { ContactImportsLive } from "./contactImports.ts"

/** Campaigns with what they are built on: uploaded files, their imports and telephony configurations. */
export const CampaignsAreaLive = CampaignsLive.pipe(
  Layer.provideMerge(ContactImportsLive),
  Layer.provideMerge(Layer.mergeAll(StorageLive, TelephonyConfigsLive))
)
