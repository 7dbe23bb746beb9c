import { Effect, Layer } from "effect"
import { ListenLive, ServeApiLive } from "../http/server.ts"
import { CallsAreaLive, ScheduledCallsAreaLive } from "../layers/calls/mod.ts"
import { CampaignProgressFeedLive } from "../layers/campaigns/campaignProgressFeed.ts"
import { CampaignsAreaLive } from "../layers/campaigns/mod.ts"
import { CampaignCallsAreaLive, DialerLive } from "../layers/campaigns/scheduler/mod.ts"
import { CompliancePoliciesLive, DoNotCallLive } from "../layers/compliance/mod.ts"
import { ConversationAreaLive } from "../layers/conversation/mod.ts"
import { DatabaseLive } from "../layers/database.ts"
import { MigrationsLive } from "../layers/db/migrate.ts"
import { ApiKeysLive } from "../layers/identity/apiKeys.ts"
import { IdentityLive } from "../layers/identity/identity.ts"
import { MembersLive } from "../layers/identity/members.ts"
import { PasswordHashingLive } from "../layers/identity/passwordHashing.ts"
import { DocumentCatalogLive, KnowledgeBaseLive } from "../layers/knowledge/mod.ts"
import { ModelSettingsLive } from "../layers/llm/modelSettings.ts"
import { LlmChatLive } from "../layers/llm/openaiChat.ts"
import { IdleMemoryReleaseLive } from "../layers/memory/mod.ts"
import { ModelChecksLive } from "../layers/modelChecks/modelChecks.ts"
import { ObservabilityLive } from "../layers/observability.ts"
import { OperatorAccessLive, OperatorEndpointLive } from "../layers/operator/operatorAccess.ts"
import { OutboundHttpLive } from "../layers/outbound/outboundHttp.ts"
import { PublicUrlLive } from "../layers/publicUrl.ts"
import { QualityReviewsLive } from "../layers/quality/mod.ts"
import { RecordingCatalogLive, RecordingsAreaLive } from "../layers/recordings/mod.ts"
import { SecretBoxLive } from "../layers/secrets/secretBox.ts"
import { StorageLive } from "../layers/storage/mod.ts"
import { ToolsAreaLive } from "../layers/tools/mod.ts"
import { RunArtifactsLive } from "../layers/usage/runArtifacts.ts"
import { UsageReportsLive } from "../layers/usage/usageReports.ts"
import { VoiceAreaLive } from "../layers/voice/mod.ts"
import { SpeechLive } from "../layers/voice/speech/mod.ts"
import { WebhookDeliveryAreaLive, WebhookEndpointsLive } from "../layers/webhooks/mod.ts"
import { AgentsLive } from "../layers/workflows/mod.ts"
import { DatabaseQueue } from "../services/DatabaseQueue.ts"
import { Identity } from "../services/Identity.ts"
import { AppConfigLive } from "./config.ts"

/** One knowledge base (one background indexer) for the API, chats and calls alike. */
const KnowledgeAreaLive = KnowledgeBaseLive.pipe(Layer.provide(Layer.mergeAll(CampaignsAreaLive, ModelSettingsLive)))

const BootstrapLive = Layer.effectDiscard(Effect.flatMap(Identity, (identity) => identity.bootstrapAdmin))

/** Voice calls over the areas they need; one value, so the application builds them once. */
const VoiceWiredLive = VoiceAreaLive.pipe(
  Layer.provide(
    Layer.mergeAll(
      CampaignCallsAreaLive.pipe(Layer.provideMerge(CampaignsAreaLive)),
      AgentsLive,
      RecordingsAreaLive,
      KnowledgeAreaLive
    )
  )
)

/** Every service, over a migrated database below it. */
const ServicesOverDatabase = Layer.mergeAll(
  IdentityLive,
  ApiKeysLive,
  MembersLive.pipe(Layer.provide(ApiKeysLive)),
  UsageReportsLive,
  RunArtifactsLive.pipe(Layer.provide(StorageLive)),
  AgentsLive,
  ModelChecksLive.pipe(Layer.provide(AgentsLive)),
  QualityReviewsLive.pipe(Layer.provide(Layer.mergeAll(AgentsLive, LlmChatLive))),
  CampaignsAreaLive,
  CampaignCallsAreaLive.pipe(Layer.provide(CampaignsAreaLive)),
  CampaignProgressFeedLive.pipe(Layer.provide(CampaignCallsAreaLive.pipe(Layer.provideMerge(CampaignsAreaLive)))),
  // Agent tests in voice mode hold their calls through the voice area, speaking with its TTS.
  ConversationAreaLive.pipe(Layer.provide(Layer.mergeAll(AgentsLive, KnowledgeAreaLive, VoiceWiredLive, SpeechLive))),
  WebhookEndpointsLive,
  CompliancePoliciesLive,
  CallsAreaLive.pipe(Layer.provide(CampaignCallsAreaLive.pipe(Layer.provideMerge(CampaignsAreaLive)))),
  RecordingsAreaLive,
  KnowledgeAreaLive,
  VoiceWiredLive
).pipe(
  Layer.provideMerge(RecordingCatalogLive),
  Layer.provideMerge(DocumentCatalogLive),
  // Below the areas: the conversation engine's add_to_do_not_call tool adds to the same list.
  Layer.provideMerge(DoNotCallLive.pipe(Layer.provide(StorageLive))),
  Layer.provideMerge(ToolsAreaLive),
  Layer.provideMerge(OutboundHttpLive),
  Layer.provideMerge(PasswordHashingLive),
  Layer.provideMerge(OperatorAccessLive),
  Layer.provideMerge(SecretBoxLive)
)

/** Every service over the database, ready for the HTTP layer (or a CLI command) to use. */
export const ServicesLive = ServicesOverDatabase.pipe(Layer.provideMerge(DatabaseLive))

/**
 * Every service over the SqlClient and PgClient of an application embedding talkgraph (PostgreSQL,
 * its client made with `pgTypes`); the schema is migrated on it first. Its pool is its own, so
 * background imports never defer to talkgraph's requests there.
 */
export const ServicesOnSqlClient = ServicesOverDatabase.pipe(
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(Layer.succeed(DatabaseQueue, { contended: Effect.succeed(false) }))
)

type Listener = Layer.Layer.Success<typeof ListenLive>

/**
 * The running service on a given listener, with everything it needs below it. The listener is
 * bound first: a busy port or a wrong HOST stops the start before the data dir is created, the
 * schema migrated or an admin made.
 */
export const appOn = <E, R>(listen: Layer.Layer<Listener, E, R>) =>
  Layer.mergeAll(
    DialerLive,
    ScheduledCallsAreaLive,
    WebhookDeliveryAreaLive,
    OperatorEndpointLive,
    IdleMemoryReleaseLive
  ).pipe(
    Layer.provideMerge(ServeApiLive),
    Layer.provide(BootstrapLive),
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(PublicUrlLive),
    Layer.provideMerge(listen),
    Layer.provide(ObservabilityLive),
    Layer.provide(AppConfigLive)
  )

/** The one composition of the running service: `talkgraph serve`. */
export const AppLive = appOn(ListenLive)
