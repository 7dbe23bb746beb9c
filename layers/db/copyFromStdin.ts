import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"

/**
 * One `COPY … FROM STDIN` of `data` (rows in COPY's text format) on the current transaction's
 * connection, through pg-copy-streams. It needs node-postgres's own client under @effect/sql-pg
 * (a detail of that driver, checked here rather than trusted); `message` names the failure for
 * the log.
 */
export const copyFromStdin = (statement: string, data: ReadonlyArray<Buffer>, message: string) =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) => {
    const client = Option.flatMap(transaction, ([connection]) => {
      const raw: unknown = (connection as { readonly pg?: unknown }).pg
      return raw instanceof pg.Client ? Option.some(raw) : Option.none()
    })
    if (Option.isNone(client)) return Effect.die(new Error("COPY needs the transaction's node-postgres client"))
    return Effect.tryPromise({
      try: () => pipeline(Readable.from(data), client.value.query(copyFrom(statement))),
      catch: (cause) => new SqlError({ cause, message })
    })
  })
