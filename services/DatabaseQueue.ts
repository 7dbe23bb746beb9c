import { Context, type Effect } from "effect"

/**
 * The statements of this process waiting for a database connection right now. Background work
 * that can wait (a contacts import) defers to them, so requests are not queued behind it.
 */
export interface DatabaseQueueShape {
  readonly waiting: Effect.Effect<number>
}

export class DatabaseQueue extends Context.Tag("talkgraph/DatabaseQueue")<DatabaseQueue, DatabaseQueueShape>() {}
