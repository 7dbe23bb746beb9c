import { Context, type Effect } from "effect"

/**
 * Whether other statements of this process contend for the database right now: waiting for a
 * connection, or, on the embedded database whose one connection runs one statement at a time,
 * running on it. Background work that can wait (a contacts import) defers to them, so requests
 * are not queued behind it.
 */
export interface DatabaseQueueShape {
  readonly contended: Effect.Effect<boolean>
}

export class DatabaseQueue extends Context.Tag("talkgraph/DatabaseQueue")<DatabaseQueue, DatabaseQueueShape>() {}
