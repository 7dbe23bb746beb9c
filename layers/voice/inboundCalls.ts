import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { CarrierAccounts } from "../../services/CarrierAccounts.ts"
import { type Provider, Telephony, type WebhookRequest } from "../../services/Telephony.ts"
import { Forbidden, NotFound } from "../../src/domain/errors.ts"
import type { MediaLinks } from "./mediaLinks.ts"
import type { VoiceRuns } from "./voiceRuns.ts"

/** A carrier connects the media stream within seconds of our answer; the link is dead after this. */
const INBOUND_TOKEN_SECONDS = 300

interface Route {
  readonly organization_id: number
  readonly workflow_id: number
  readonly definition_id: number
  readonly version_number: number
}

/** Incoming calls to a configuration's numbers: each becomes an inbound run of the number's agent. */
export const makeInboundCalls = (runs: VoiceRuns, links: MediaLinks) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const telephony = yield* Telephony
    const accounts = yield* CarrierAccounts

    const answer = Effect.fn("VoiceCalls.inbound")(
      function*(provider: Provider, configurationId: number, request: WebhookRequest) {
        const [config] = yield* sql<{ organization_id: number; provider: string }>`
      SELECT organization_id, provider FROM telephony_configurations WHERE id = ${configurationId} AND NOT inactive`
          .pipe(Effect.orDie)
        // An unknown configuration is refused as a bad signature is: whoever cannot sign learns nothing.
        const account = config && config.provider === provider
          ? yield* accounts.forConfiguration(config.organization_id, configurationId)
          : Option.none()
        const adapter = telephony.adapter(provider)
        if (Option.isNone(account) || !(yield* adapter.verifyWebhook(account.value, request))) {
          yield* Effect.logWarning("Inbound call refused: unknown configuration or bad signature", {
            provider,
            configuration_id: configurationId
          })
          return yield* new Forbidden({ message: "Invalid webhook signature" })
        }
        const incoming = adapter.parseIncomingCall(request)
        if (Option.isNone(incoming)) return yield* new NotFound({ resource: "Incoming call", id: configurationId })
        const { from, to, providerCallId } = incoming.value
        const called = to.startsWith("+") || to.startsWith("sip:") ? to : `+${to}`
        // The number's agent answers with its published version; a number without one is not answered.
        const [route] = yield* sql<Route>`
      SELECT p.organization_id, w.id AS workflow_id, d.id AS definition_id, d.version_number
      FROM phone_numbers p
      JOIN workflows w ON w.id = p.inbound_workflow_id AND w.organization_id = p.organization_id AND w.status = 'active'
      JOIN workflow_definitions d ON d.workflow_id = w.id AND d.version_status = 'published'
      WHERE p.telephony_configuration_id = ${configurationId} AND p.address IN (${to}, ${called}) AND p.is_active`.pipe(
          Effect.orDie
        )
        if (!route) {
          yield* Effect.logWarning("Inbound call to a number without an agent", {
            provider,
            configuration_id: configurationId
          })
          return yield* new NotFound({ resource: "Agent for number", id: called })
        }
        const runId = yield* runs.insert({
          organizationId: route.organization_id,
          workflowId: route.workflow_id,
          definitionId: route.definition_id,
          versionNumber: route.version_number,
          name: `Inbound call from ${from}`,
          mode: provider,
          initialContext: { caller_number: from, called_number: called },
          carrierCall: {
            callerNumber: from,
            calledNumber: called,
            providerCallId,
            telephonyConfigurationId: configurationId
          }
        })
        yield* Effect.annotateCurrentSpan({
          run_id: runId,
          workflow_id: route.workflow_id,
          organization_id: route.organization_id,
          provider
        })
        const link = yield* links.link(provider, runId, INBOUND_TOKEN_SECONDS)
        return adapter.answerMarkup(link.url)
      }
    )

    return { answer }
  })
