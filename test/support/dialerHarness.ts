import { SqlClient } from "@effect/sql"
import { Clock, ConfigProvider, Effect, Exit, Layer, Option, Scope, TestClock } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { inject } from "vitest"
import { AppConfigLive } from "../../app/config.ts"
import { AttemptRefsLive } from "../../layers/campaigns/scheduler/attemptRefs.ts"
import { CampaignDoorbellLive } from "../../layers/campaigns/scheduler/campaignDoorbell.ts"
import { CampaignSchedulerLive } from "../../layers/campaigns/scheduler/campaignScheduler.ts"
import { DialerRepoLive } from "../../layers/campaigns/scheduler/dialerRepo.ts"
import { SchedulerSettings, type SchedulerSettingsShape } from "../../layers/campaigns/scheduler/schedulerSettings.ts"
import { DatabaseLive } from "../../layers/database.ts"
import { SecretBoxLive } from "../../layers/secrets/secretBox.ts"
import { TelephonyConfigsAreaLive } from "../../layers/telephony/mod.ts"
import { CredentialsLive } from "../../layers/tools/credentials.ts"
import { CampaignDoorbell } from "../../services/CampaignDoorbell.ts"
import { CampaignScheduler } from "../../services/CampaignScheduler.ts"
import { DialerRepo } from "../../services/DialerRepo.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { CallNotPlaced, type CallStatus, type CarrierAdapter, Telephony } from "../../services/Telephony.ts"
import type { CallOutcome } from "../../src/campaigns/retryPolicy.ts"
import type { CampaignId } from "../../src/domain/ids.ts"
import { postgresUrl } from "./database.ts"
import { LoopbackOutbound } from "./outbound.ts"
import { definitionUsing } from "./workflowRows.ts"

/**
 * The dialer on a database of its own with an in-memory carrier, for TestClock tests: calls are
 * recorded when placed and end only when the test says so.
 */

interface PlacedCall {
  readonly runId: number
  readonly to: string
  readonly at: number
  readonly providerCallId: string
  readonly mediaStreamUrl: string | undefined
}

/** A database no other test file's dialer can see: a PGlite copy, or a fresh PostgreSQL database. */
export const isolatedDatabase = async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-dialer-"))
  const base = postgresUrl()
  let databaseUrl: string | undefined
  let name: string | undefined
  if (base) {
    name = `talkgraph_dialer_${crypto.randomBytes(4).toString("hex")}`
    const admin = new pg.Client({ connectionString: base })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    await admin.end()
    const parsed = new URL(base)
    parsed.pathname = `/${name}`
    databaseUrl = parsed.toString()
  } else {
    await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
  }
  const settings = new Map<string, string>([
    ["TALKGRAPH_DATA_DIR", dataDir],
    ...(databaseUrl
      ? [["DATABASE_URL", databaseUrl], ["TALKGRAPH_SECRET_KEY", "dialer-test-secret-key-0123456789abcdef"]] as const
      : [])
  ])
  const scope = Effect.runSync(Scope.make())
  const layer = TelephonyConfigsAreaLive.pipe(
    Layer.provideMerge(CredentialsLive),
    Layer.provideMerge(Layer.succeed(PublicUrl, "http://dialer.test")),
    Layer.provideMerge(LoopbackOutbound),
    Layer.provideMerge(SecretBoxLive),
    Layer.provideMerge(DatabaseLive),
    Layer.provideMerge(AppConfigLive),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(settings)))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return {
    context,
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      if (name && base) {
        const admin = new pg.Client({ connectionString: base })
        await admin.connect()
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        await admin.end()
      }
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  }
}

export type IsolatedDatabase = Awaited<ReturnType<typeof isolatedDatabase>>

export const testSettings: SchedulerSettingsShape = {
  orgMaxConcurrentCalls: 50,
  leaseSeconds: 600,
  pollMillis: 1000,
  maxCallSeconds: 60,
  deadlineGraceSeconds: 10,
  mediaTokenSeconds: 300,
  // These tests run in simulated time, where the real event loop's utilization means nothing;
  // test/loopSaturation.test.ts drives the hold itself.
  holdLoopPercent: 0
}

/**
 * A carrier in memory: placed calls are recorded; `statuses` answers reconciliation; `refusals`
 * lists what the next placements fail with (permanent: refused; transient: unreachable).
 */
export const makeTestCarrier = () => {
  const placed: Array<PlacedCall> = []
  const statuses = new Map<string, CallStatus>()
  const hungUp: Array<string> = []
  const refusals: Array<{ readonly permanent: boolean }> = []
  let sequence = 0
  const adapter: CarrierAdapter = {
    placeCall: (_account, call) => {
      const refusal = refusals.shift()
      if (refusal) {
        return Effect.fail(
          new CallNotPlaced({ message: "the test carrier refused the call", permanent: refusal.permanent })
        )
      }
      return Effect.map(Clock.currentTimeMillis, (at) => {
        const providerCallId = `TC${++sequence}-${crypto.randomUUID()}`
        placed.push({
          runId: Number(call.statusCallbackUrl.split("/").pop()),
          to: call.to,
          at,
          providerCallId,
          mediaStreamUrl: call.mediaStreamUrl
        })
        return { providerCallId }
      })
    },
    hangUp: (_account, { providerCallId }) => Effect.sync(() => void hungUp.push(providerCallId)),
    callStatus: (_account, { providerCallId }) =>
      Effect.succeed(statuses.get(providerCallId) ?? { providerCallId, outcome: null, durationSeconds: null }),
    verifyWebhook: () => Effect.succeed(true),
    parseStatusCallback: () => Option.none(),
    parseIncomingCall: () => Option.none(),
    answerMarkup: (streamUrl) => ({ contentType: "text/plain", body: streamUrl }),
    // The scheduler's tests place and end calls only; no call of theirs is transferred.
    transfer: () => Effect.void,
    parseTransferEvent: () => Option.none(),
    transferEventReply: () => ({ contentType: "text/plain", body: "" }),
    returnsAfterTransfer: false,
    transferMarkup: () => ({ contentType: "text/plain", body: "" }),
    streamSurvivesTransfer: false
  }
  return { adapter, placed, statuses, hungUp, refusals }
}

export type TestCarrier = ReturnType<typeof makeTestCarrier>

/** The scheduler over the isolated database, the test carrier and the given settings. */
export const dialerLayer = (
  database: IsolatedDatabase,
  carrier: TestCarrier,
  settings: SchedulerSettingsShape = testSettings
) =>
  CampaignSchedulerLive.pipe(
    Layer.provideMerge(Layer.mergeAll(CampaignDoorbellLive, DialerRepoLive, AttemptRefsLive)),
    Layer.provide(Layer.succeed(Telephony, Telephony.of({ adapter: () => carrier.adapter }))),
    Layer.provide(Layer.succeed(SchedulerSettings, settings)),
    Layer.provide(Layer.succeed(PublicUrl, "http://dialer.test")),
    Layer.provide(Layer.succeedContext(database.context))
  )

interface CampaignSetup {
  readonly contacts: number
  readonly max_concurrency?: number | null
  readonly rate_limit_per_second?: number
  readonly retry_config?: Record<string, unknown>
  readonly circuit_breaker?: Record<string, unknown>
  readonly schedule_config?: Record<string, unknown> | null
  /** Another campaign of this organization (its workflow and telephony configuration), instead of a new one. */
  readonly organization?: CampaignOrganization
}

interface CampaignOrganization {
  readonly organizationId: number
  readonly workflowId: number
  readonly telephonyConfigurationId: number
}

/** A new organization with a published workflow and a Twilio configuration with a caller number. */
export const newOrganization = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const secrets = yield* SecretBox
  const [org] = yield* sql<{ id: number }>`INSERT INTO organizations (name) VALUES ('dialer test') RETURNING id`
  const [workflow] = yield* sql<{ id: number }>`
    INSERT INTO workflows (organization_id, workflow_uuid, name, status)
    VALUES (${org!.id}, ${crypto.randomUUID()}, 'agent', 'active') RETURNING id`
  yield* sql`
    INSERT INTO workflow_definitions (workflow_id, version_number, version_status, workflow_definition, published_at)
    VALUES (${workflow!.id}, 1, 'published', ${JSON.stringify(definitionUsing())}::jsonb, now())`
  const [config] = yield* sql<{ id: number }>`
    INSERT INTO telephony_configurations (organization_id, name, provider, is_default_outbound, settings, credentials)
    VALUES (${org!.id}, 'test carrier', 'twilio', true, ${JSON.stringify({ account_sid: "AC1" })}::jsonb,
            ${secrets.encrypt(JSON.stringify({ auth_token: "token" }))})
    RETURNING id`
  yield* sql`
    INSERT INTO phone_numbers (organization_id, telephony_configuration_id, address, is_default_caller_id)
    VALUES (${org!.id}, ${config!.id}, ${`+1999${String(config!.id).padStart(7, "0")}`}, true)`
  return {
    organizationId: org!.id,
    workflowId: workflow!.id,
    telephonyConfigurationId: config!.id
  } satisfies CampaignOrganization
})

/** A running campaign of numbered contacts, in a new organization unless `setup.organization` names one. */
export const runningCampaign = (setup: CampaignSetup) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const organization = setup.organization ?? (yield* newOrganization)
    const retry = {
      enabled: true,
      max_retries: 2,
      retry_delay_seconds: 120,
      retry_on_busy: true,
      retry_on_no_answer: true,
      retry_on_voicemail: false,
      ...setup.retry_config
    }
    const breaker = {
      enabled: false,
      failure_threshold: 0.5,
      window_seconds: 120,
      min_calls_in_window: 5,
      ...setup.circuit_breaker
    }
    const [campaign] = yield* sql<{ id: CampaignId }>`
      INSERT INTO campaigns (organization_id, workflow_id, telephony_configuration_id, name, state, source_type, source_id,
                             retry_config, max_concurrency, rate_limit_per_second, schedule_config, circuit_breaker,
                             total_rows, total_queued_count, started_at, updated_at)
      VALUES (${organization.organizationId}, ${organization.workflowId}, ${organization.telephonyConfigurationId}, 'test', 'running',
              'csv', 'test.csv', ${JSON.stringify(retry)}::jsonb,
              ${setup.max_concurrency ?? null}, ${setup.rate_limit_per_second ?? 100},
              ${setup.schedule_config ? JSON.stringify(setup.schedule_config) : null}::jsonb, ${
      JSON.stringify(breaker)
    }::jsonb,
              ${setup.contacts}, ${setup.contacts}, ${now}, ${now})
      RETURNING id`
    for (let row = 1; row <= setup.contacts; row++) {
      yield* sql`
        INSERT INTO campaign_contacts (campaign_id, row_number, phone_number, context, next_attempt_at)
        VALUES (${campaign!.id}, ${row}, ${`+1555${String(campaign!.id).padStart(3, "0")}${
        String(row).padStart(4, "0")
      }`},
                ${JSON.stringify({ first_name: `P${row}` })}::jsonb, ${now})`
    }
    // What the state-change trigger's NOTIFY does between processes.
    yield* Effect.flatMap(CampaignScheduler, (scheduler) => scheduler.wake(campaign!.id))
    return { campaignId: campaign!.id, organizationId: organization.organizationId, organization }
  })

/** Ends a placed call with an outcome, as a status callback would, and wakes the dialer. */
export const finish = (runId: number, outcome: CallOutcome) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* DialerRepo
    const doorbell = yield* CampaignDoorbell
    const [attempt] = yield* sql<{ id: number }>`SELECT id FROM campaign_attempts WHERE run_id = ${runId}`
    const applied = yield* repo.applyOutcome({
      attemptId: attempt!.id,
      outcome,
      endReason: `telephony_${outcome}`,
      durationSeconds: 1,
      providerCallId: null,
      now: yield* Clock.currentTimeMillis
    })
    if (applied?.campaignId) yield* doorbell.slotFreed(applied.campaignId)
  })

/** Lets real database round trips finish between TestClock steps. */
export const settle = (ms = 40) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Moves the TestClock forward in steps, letting the dialer work at each one. */
export const advance = (totalMs: number, stepMs = 100) =>
  Effect.gen(function*() {
    yield* settle()
    for (let passed = 0; passed < totalMs; passed += stepMs) {
      yield* TestClock.adjust(Math.min(stepMs, totalMs - passed))
      yield* settle(15)
    }
    yield* settle()
  })

/**
 * Moves the TestClock forward until `done` holds (or `limitMs` of test time has passed): each step's
 * real pause is a guess at how long the dialer's database work takes, which a loaded machine exceeds.
 */
export const advanceUntil = (done: () => boolean, limitMs = 10_000, stepMs = 100) =>
  Effect.gen(function*() {
    for (let passed = 0; passed < limitMs && !done(); passed += stepMs) yield* advance(stepMs, stepMs)
    yield* settle()
  })

export const campaignRow = (campaignId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{
        state: string
        processed_rows: number
        failed_rows: number
        executed_count: number
        total_queued_count: number
        logs: ReadonlyArray<{ event: string; details?: any }>
      }>`SELECT state, processed_rows, failed_rows, executed_count, total_queued_count, logs FROM campaigns WHERE id = ${campaignId}`,
      (rows) => rows[0]!
    ))
