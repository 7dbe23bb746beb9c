import { Config, Context, Effect, Layer } from "effect"

/**
 * How the dialer paces itself and how processes share campaigns. Every value has a default that
 * suits one process against PGlite as well as several against PostgreSQL.
 */
export interface SchedulerSettingsShape {
  /** Live calls an organization may have across all its campaigns and processes. */
  readonly orgMaxConcurrentCalls: number
  /** How long a campaign stays with a process that stopped renewing it (a crashed one). */
  readonly leaseSeconds: number
  /** Backstop for missed wake-ups: how often idle actors and the supervisor look again. */
  readonly pollMillis: number
  /** The carrier's time limit for a call; with the grace it gives the call's deadline. */
  readonly maxCallSeconds: number
  readonly deadlineGraceSeconds: number
  /** How long the media-stream link in the answer markup stays valid. */
  readonly mediaTokenSeconds: number
  /**
   * Event-loop utilization, in percent, from which this process stops claiming new calls until it
   * catches up with the requests of those it placed (see `src/campaigns/loopSaturation.ts`); 0 never holds.
   */
  readonly holdLoopPercent: number
}

export class SchedulerSettings
  extends Context.Tag("talkgraph/SchedulerSettings")<SchedulerSettings, SchedulerSettingsShape>()
{}

export const schedulerDefaults: SchedulerSettingsShape = {
  orgMaxConcurrentCalls: 50,
  leaseSeconds: 15,
  pollMillis: 1000,
  maxCallSeconds: 1800,
  deadlineGraceSeconds: 60,
  mediaTokenSeconds: 300,
  holdLoopPercent: 95
}

const positive = (name: string, fallback: number, max: number) =>
  Config.integer(name).pipe(
    Config.validate({
      message: `must be an integer between 1 and ${max}`,
      validation: (value) => value >= 1 && value <= max
    }),
    Config.withDefault(fallback)
  )

export const SchedulerSettingsLive = Layer.effect(
  SchedulerSettings,
  Effect.gen(function*() {
    return {
      orgMaxConcurrentCalls: yield* positive(
        "TALKGRAPH_ORG_MAX_CONCURRENT_CALLS",
        schedulerDefaults.orgMaxConcurrentCalls,
        100_000
      ),
      leaseSeconds: yield* positive("TALKGRAPH_CAMPAIGN_LEASE_SECONDS", schedulerDefaults.leaseSeconds, 3600),
      pollMillis: yield* positive("TALKGRAPH_SCHEDULER_POLL_MS", schedulerDefaults.pollMillis, 60_000),
      maxCallSeconds: yield* positive("TALKGRAPH_MAX_CALL_SECONDS", schedulerDefaults.maxCallSeconds, 14_400),
      deadlineGraceSeconds: yield* positive(
        "TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS",
        schedulerDefaults.deadlineGraceSeconds,
        3600
      ),
      mediaTokenSeconds: schedulerDefaults.mediaTokenSeconds,
      holdLoopPercent: yield* Config.integer("TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT").pipe(
        Config.validate({
          message: "must be an integer between 0 (never hold) and 100",
          validation: (value) => value >= 0 && value <= 100
        }),
        Config.withDefault(schedulerDefaults.holdLoopPercent)
      )
    }
  })
)
