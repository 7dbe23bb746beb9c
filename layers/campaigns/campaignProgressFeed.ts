import {
  Duration,
  Effect,
  ExecutionStrategy,
  Exit,
  Layer,
  Metric,
  PubSub,
  Queue,
  Scope,
  Stream,
  SubscriptionRef
} from "effect"
import { CampaignDoorbell } from "../../services/CampaignDoorbell.ts"
import { CampaignProgressFeed } from "../../services/CampaignProgressFeed.ts"
import { type CampaignProgress, Campaigns } from "../../services/Campaigns.ts"
import { isFinal } from "../../src/campaigns/campaignState.ts"
import { NotFound } from "../../src/domain/errors.ts"
import type { CampaignId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"

/**
 * How often a followed campaign is read without a ring: calls placed (which ring nothing) and
 * whatever another process changed show up within this.
 */
export const BACKSTOP = Duration.seconds(2)

/** Progress reads for live followers (a watcher's, and the first follower's): what the feed costs the database. */
export const progressReads = Metric.counter("talkgraph_campaign_progress_reads", {
  description: "Campaign progress reads made for live followers: one per change per followed campaign per process"
})

/** Campaigns with followers in this process, each read by one watcher. */
export const progressWatchers = Metric.gauge("talkgraph_campaign_progress_watchers", {
  description: "Campaigns whose progress this process is watching for live followers"
})

interface Watcher {
  readonly organizationId: number
  readonly latest: SubscriptionRef.SubscriptionRef<CampaignProgress>
  readonly scope: Scope.CloseableScope
  followers: number
}

/** Dates become their ISO text: two snapshots are the same when their JSON is. */
const sameProgress = (a: CampaignProgress, b: CampaignProgress) => JSON.stringify(a) === JSON.stringify(b)

export const CampaignProgressFeedLive = Layer.scoped(
  CampaignProgressFeed,
  Effect.gen(function*() {
    const campaigns = yield* Campaigns
    const doorbell = yield* CampaignDoorbell
    const feedScope = yield* Effect.scope
    const watchers = new Map<number, Watcher>()
    // Joining and leaving decide together whether a watcher starts or stops.
    const lock = yield* Effect.makeSemaphore(1)

    const read = (principal: Principal, campaignId: CampaignId) =>
      campaigns.progress(principal, campaignId).pipe(Effect.tap(() => Metric.increment(progressReads)))

    /** Re-reads at each ring for the campaign or after BACKSTOP, publishing only changes, until it ends. */
    const watch = (principal: Principal, campaignId: CampaignId, latest: Watcher["latest"]) =>
      Effect.gen(function*() {
        const rings = yield* PubSub.subscribe(doorbell.rings)
        const ringForCampaign = Queue.take(rings).pipe(
          Effect.repeat({ until: (ring) => ring.campaignId === campaignId })
        )
        // A burst of rings (several calls ending together) is answered by one read.
        const nextChange = Effect.raceFirst(ringForCampaign, Effect.sleep(BACKSTOP)).pipe(
          Effect.zipRight(Queue.takeAll(rings))
        )
        const step = nextChange.pipe(
          Effect.zipRight(read(principal, campaignId)),
          Effect.tap((now) =>
            Effect.flatMap(
              SubscriptionRef.get(latest),
              (before) => (sameProgress(before, now) ? Effect.void : SubscriptionRef.set(latest, now))
            )
          ),
          Effect.map((now) => isFinal(now.state)),
          Effect.catchAllCause((cause) =>
            Effect.logWarning("reading a followed campaign's progress failed", cause).pipe(Effect.as(false))
          )
        )
        yield* step.pipe(Effect.repeat({ until: (ended) => ended }))
      })

    const join = (principal: Principal, campaignId: CampaignId, snapshot: CampaignProgress) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const present = watchers.get(campaignId)
        if (present) {
          present.followers += 1
          return present
        }
        const scope = yield* Scope.fork(feedScope, ExecutionStrategy.sequential)
        const watcher: Watcher = {
          organizationId: principal.organizationId,
          latest: yield* SubscriptionRef.make(snapshot),
          scope,
          followers: 1
        }
        watchers.set(campaignId, watcher)
        yield* Metric.set(progressWatchers, watchers.size)
        if (!isFinal(snapshot.state)) {
          // Joining runs uninterruptibly (it acquires a follower); the watcher must stay interruptible.
          yield* Effect.scoped(watch(principal, campaignId, watcher.latest)).pipe(
            Effect.interruptible,
            Effect.forkIn(scope)
          )
        }
        return watcher
      }))

    const leave = (campaignId: CampaignId) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const watcher = watchers.get(campaignId)
        if (!watcher) return
        watcher.followers -= 1
        if (watcher.followers > 0) return
        watchers.delete(campaignId)
        yield* Metric.set(progressWatchers, watchers.size)
        yield* Scope.close(watcher.scope, Exit.void)
      }))

    const follow = Effect.fn("CampaignProgressFeed.follow")(function*(principal: Principal, campaignId: CampaignId) {
      const watched = watchers.get(campaignId)
      // A campaign already watched is known to be its organization's: no read to join it.
      if (watched && watched.organizationId !== principal.organizationId) {
        return yield* new NotFound({ resource: "Campaign", id: campaignId })
      }
      const snapshot = watched ? yield* SubscriptionRef.get(watched.latest) : yield* read(principal, campaignId)
      return Stream.unwrapScoped(
        Effect.acquireRelease(join(principal, campaignId, snapshot), () => leave(campaignId)).pipe(
          Effect.map((watcher) => watcher.latest.changes.pipe(Stream.takeUntil((progress) => isFinal(progress.state))))
        )
      )
    })

    return CampaignProgressFeed.of({ follow })
  })
)
