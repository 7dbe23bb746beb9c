import { Effect, Layer } from "effect"
import { Campaigns } from "../../services/Campaigns.ts"
import { makeCampaignCreation } from "./campaignCreation.ts"
import { makeCampaignLifecycle } from "./campaignLifecycle.ts"
import { makeCampaignReads } from "./campaignReads.ts"
import { makeCampaignRedial } from "./campaignRedial.ts"
import { makeCampaignSettingsUpdate } from "./campaignSettingsUpdate.ts"

/** The `Campaigns` service, one file a job: creation, settings, lifecycle commands, redial and reads. */
export const CampaignsLive = Layer.effect(
  Campaigns,
  Effect.gen(function*() {
    const { create } = yield* makeCampaignCreation
    const { update } = yield* makeCampaignSettingsUpdate
    const { cancel, pause, resume, start } = yield* makeCampaignLifecycle
    const { redial } = yield* makeCampaignRedial
    const { get, list, progress, report, runs } = yield* makeCampaignReads
    return Campaigns.of({ create, list, get, update, start, pause, resume, cancel, redial, progress, runs, report })
  })
)
