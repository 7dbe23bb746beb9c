import { Context, type Effect } from "effect"
import type { DispatchStatus } from "../src/campaigns/campaignProgress.ts"
import type { Forbidden, NotFound } from "../src/domain/errors.ts"
import type { CampaignId, RunId } from "../src/domain/ids.ts"
import type { Provider, WebhookRequest } from "./Telephony.ts"

export type { DispatchStatus }

/** Provider webhooks for campaign calls, and the live view of a campaign's dialing. */
export interface CampaignCallsShape {
  /**
   * Applies a provider status callback for a run. A bad signature is refused (Forbidden) and
   * logged; a repeated or late event changes nothing.
   */
  readonly statusCallback: (
    provider: Provider,
    runId: RunId,
    request: WebhookRequest
  ) => Effect.Effect<"applied" | "ignored", Forbidden | NotFound>
  /** The answer document connecting the call's audio to the run's media stream (signed, expiring link). */
  readonly answer: (
    provider: Provider,
    runId: RunId,
    request: WebhookRequest
  ) => Effect.Effect<{ readonly contentType: string; readonly body: string }, Forbidden | NotFound>
  readonly dispatchStatus: (campaignId: CampaignId) => Effect.Effect<DispatchStatus, NotFound>
  /**
   * A call's media stream was refused because the agent cannot take it (no LLM, STT or TTS): the
   * call is failed with `reason` (its attempt too, for a campaign call), not left for the
   * carrier's "completed" to record as a success. A call already ended is left as it is.
   */
  readonly mediaRefused: (runId: RunId, reason: string) => Effect.Effect<void>
}

export class CampaignCalls extends Context.Tag("talkgraph/CampaignCalls")<CampaignCalls, CampaignCallsShape>() {}
