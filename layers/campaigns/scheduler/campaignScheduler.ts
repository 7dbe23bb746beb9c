import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import {
  Cause,
  Clock,
  Effect,
  FiberMap,
  FiberSet,
  Layer,
  Option,
  PubSub,
  Queue,
  Schedule,
  Schema,
  Stream
} from "effect"
import * as crypto from "node:crypto"
import * as os from "node:os"
import { AppConfig } from "../../../services/AppConfig.ts"
import { CampaignDoorbell, Ring } from "../../../services/CampaignDoorbell.ts"
import { CampaignScheduler } from "../../../services/CampaignScheduler.ts"
import { CarrierAccounts } from "../../../services/CarrierAccounts.ts"
import { DialerRepo } from "../../../services/DialerRepo.ts"
import { PublicUrl } from "../../../services/PublicUrl.ts"
import { SecretBox } from "../../../services/SecretBox.ts"
import { Telephony } from "../../../services/Telephony.ts"
import { TelephonyConfigs } from "../../../services/TelephonyConfigs.ts"
import { saturationLimits } from "../../../src/campaigns/loopSaturation.ts"
import { CampaignId } from "../../../src/domain/ids.ts"
import { eventLoopUtilization } from "../../eventLoopUtilization.ts"
import { AttemptRefs } from "./attemptRefs.ts"
import { type ActorDeps, runCampaignActor } from "./campaignActor.ts"
import { makeClaimTurns } from "./claimTurns.ts"
import { makeLoopSaturationGate } from "./loopSaturationGate.ts"
import { makePlacedCalls } from "./placedCalls.ts"
import { reconcileOverdue } from "./reconciliation.ts"
import { SchedulerSettings } from "./schedulerSettings.ts"

/** A crashed actor restarts after 0.5 s, 1 s, 2 s, … at most a minute apart. */
const restarts = Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("1 minute")))

const OVERDUE_BATCH = 50

const campaignIdOf = Schema.decodeUnknownOption(Schema.compose(Schema.NumberFromString, CampaignId))

/**
 * A NOTIFY payload as a ring: `<id>` from the state-change trigger, `slot:<id>` when a call ended.
 * None for anything else on the channel.
 */
const ringOf = (payload: string): Option.Option<Ring> =>
  payload.startsWith("slot:")
    ? Option.map(campaignIdOf(payload.slice(5)), (campaignId) => Ring.SlotFreed({ campaignId }))
    : Option.map(campaignIdOf(payload), (campaignId) => Ring.Changed({ campaignId }))

/** Carrier requests in flight at once from one process; beyond this, claims wait for answers. */
const MAX_CARRIER_REQUESTS = 256

/**
 * The dialer's supervisor (see `CampaignScheduler`). A ring of the doorbell, from this process or
 * by NOTIFY from another, is answered at once; each poll it renews its leases (dropping actors
 * whose campaign stopped or was taken), takes every running campaign whose lease is free or
 * lapsed, and reconciles overdue calls.
 */
export const CampaignSchedulerLive = Layer.scoped(
  CampaignScheduler,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* SchedulerSettings
    const config = yield* AppConfig
    const doorbell = yield* CampaignDoorbell
    const telephony = yield* Telephony
    const configs = yield* TelephonyConfigs
    const secrets = yield* SecretBox
    const repo = yield* DialerRepo
    const accounts = yield* CarrierAccounts
    const owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString("hex")}`
    const lease = `${settings.leaseSeconds} seconds`

    // Registered before the fibers, so it runs after they are interrupted: the campaigns are
    // handed over at once instead of after the lease lapses.
    yield* Effect.addFinalizer(() =>
      sql`UPDATE campaigns SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = ${owner}`.pipe(
        Effect.ignore
      )
    )
    const actors = yield* FiberMap.make<CampaignId>()
    // Made before the placements, so it is closed after them: the last carrier call ids are written.
    const placed = yield* makePlacedCalls(repo, yield* AttemptRefs)
    const placements = yield* FiberSet.make<unknown, unknown>()
    const carrierRequests = yield* Effect.makeSemaphore(MAX_CARRIER_REQUESTS)
    // Starts are one at a time, so a campaign woken twice at once gets one actor and one mailbox.
    const starting = yield* Effect.makeSemaphore(1)
    const background = yield* FiberSet.make<unknown, unknown>()
    const mailboxes = new Map<CampaignId, Queue.Queue<void>>()

    const deps: ActorDeps = {
      owner,
      publicUrl: yield* PublicUrl,
      settings,
      repo,
      placed,
      telephony,
      configs,
      sign: secrets.sign,
      placements,
      carrierRequests,
      claimTurns: makeClaimTurns(),
      saturation: settings.holdLoopPercent === 0
        ? { awaitHeadroom: Effect.void }
        : yield* makeLoopSaturationGate(
          yield* eventLoopUtilization,
          saturationLimits(settings.holdLoopPercent / 100)
        )
    }

    const acquire = (campaignId: CampaignId) =>
      Effect.map(
        sql`
          UPDATE campaigns SET lease_owner = ${owner}, lease_expires_at = now() + ${lease}::interval
          WHERE id = ${campaignId} AND state = 'running'
            AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_expires_at < now())
          RETURNING id`,
        (taken) => taken.length > 0
      )

    const release = (campaignId: CampaignId) =>
      sql`
        UPDATE campaigns SET lease_owner = NULL, lease_expires_at = NULL
        WHERE id = ${campaignId} AND lease_owner = ${owner} AND state <> 'running'`.pipe(Effect.asVoid)

    /** One actor's life under supervision: restarted from the database after a crash, stopped when its campaign is. */
    const supervise = (campaignId: CampaignId, mailbox: Queue.Queue<void>) =>
      Effect.gen(function*() {
        while (true) {
          const exit = yield* runCampaignActor(deps, campaignId, mailbox).pipe(
            Effect.sandbox,
            Effect.tapError((cause) =>
              Effect.logError("campaign actor crashed; restarting", { campaign_id: campaignId }, cause)
            ),
            Effect.retry({ schedule: restarts, while: (cause) => !Cause.isInterruptedOnly(cause) }),
            Effect.catchAll(Effect.failCause)
          )
          if (exit === "stopped") return
        }
      }).pipe(
        Effect.ensuring(Effect.suspend(() => {
          mailboxes.delete(campaignId)
          return release(campaignId).pipe(Effect.ignore)
        }))
      )

    const start = (campaignId: CampaignId) =>
      Effect.gen(function*() {
        if (yield* FiberMap.has(actors, campaignId)) return
        if (!(yield* acquire(campaignId))) return
        const mailbox = yield* Queue.sliding<void>(1)
        mailboxes.set(campaignId, mailbox)
        yield* FiberMap.run(actors, campaignId, supervise(campaignId, mailbox))
      }).pipe(starting.withPermits(1))

    const wake = (campaignId: CampaignId) =>
      Effect.suspend(() => {
        const mailbox = mailboxes.get(campaignId)
        return mailbox ? Queue.offer(mailbox, undefined).pipe(Effect.asVoid) : start(campaignId)
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("campaign wake-up failed", cause)))

    /** A freed slot matters only to the actor already dialing that campaign (wherever it runs). */
    const wakeActor = (campaignId: CampaignId) =>
      Effect.suspend(() => {
        const mailbox = mailboxes.get(campaignId)
        return mailbox ? Queue.offer(mailbox, undefined).pipe(Effect.asVoid) : Effect.void
      })

    /** The one wake path: a ring from this process or, through NOTIFY, from any other. */
    const answer = Ring.$match({
      Changed: ({ campaignId }) => wake(campaignId),
      SlotFreed: ({ campaignId }) => wakeActor(campaignId)
    })

    /** Renews this process's leases; actors whose campaign is no longer running here are stopped. */
    const heartbeat = Effect.gen(function*() {
      // Only actors started before the renewal are judged by it: one started meanwhile is not in it.
      const running = Array.from(actors, ([campaignId]) => campaignId)
      const renewed = yield* sql<{ id: number }>`
        UPDATE campaigns SET lease_expires_at = now() + ${lease}::interval
        WHERE lease_owner = ${owner} AND state = 'running'
        RETURNING id`
      const kept = new Set(renewed.map((row) => row.id))
      for (const campaignId of running) {
        if (!kept.has(campaignId)) yield* FiberMap.remove(actors, campaignId)
      }
      yield* sql`
        UPDATE campaigns SET lease_owner = NULL, lease_expires_at = NULL
        WHERE lease_owner = ${owner} AND state <> 'running'`
    })

    /** Free or lapsed campaigns, and any of this process's own that has no actor (its actor stopped meanwhile). */
    const takeFreeCampaigns = Effect.gen(function*() {
      const free = yield* sql<{ id: CampaignId }>`
        SELECT id FROM campaigns
        WHERE state = 'running' AND (lease_owner IS NULL OR lease_expires_at < now() OR lease_owner = ${owner})
        ORDER BY id LIMIT 100`
      for (const { id } of free) yield* start(id)
    })

    const sweepOverdue = Effect.gen(function*() {
      const overdue = yield* repo.claimOverdue(yield* Clock.currentTimeMillis, OVERDUE_BATCH)
      for (const attempt of overdue) {
        yield* FiberSet.run(
          placements,
          reconcileOverdue(attempt, repo, accounts, telephony).pipe(
            Effect.flatMap((applied) => (applied?.campaignId ? wakeActor(applied.campaignId) : Effect.void)),
            Effect.catchAllCause((cause) => Effect.logError("reconciling an overdue call failed", cause))
          )
        )
      }
    })

    const tick = Effect.all([heartbeat, takeFreeCampaigns, sweepOverdue], { discard: true }).pipe(
      Effect.catchAllCause((cause) => Effect.logError("campaign scheduler tick failed", cause)),
      Effect.withSpan("CampaignScheduler.tick")
    )
    yield* FiberSet.run(background, tick.pipe(Effect.repeat(Schedule.spaced(settings.pollMillis))))

    const local = yield* PubSub.subscribe(doorbell.rings)
    yield* FiberSet.run(background, Queue.take(local).pipe(Effect.flatMap(answer), Effect.forever))

    // PostgreSQL delivers NOTIFY to every process; the embedded database cannot, and needs none.
    if (Option.isSome(config.databaseUrl)) {
      const pg = yield* PgClient.PgClient
      yield* FiberSet.run(
        background,
        pg.listen("talkgraph_campaigns").pipe(
          Stream.runForEach((payload) => Option.match(ringOf(payload), { onNone: () => Effect.void, onSome: answer })),
          Effect.tapErrorCause((cause) =>
            Effect.logWarning("LISTEN talkgraph_campaigns failed; polling meanwhile", cause)
          ),
          Effect.retry(Schedule.spaced("1 second"))
        )
      )
    }

    return CampaignScheduler.of({
      held: Effect.sync(() => Array.from(actors, ([campaignId]) => campaignId)),
      wake,
      owner
    })
  })
)
