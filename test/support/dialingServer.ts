import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import { type CarrierStandIn, startCarrierStandIn } from "./carrierStandIns.ts"
import { type Client, client } from "./client.ts"
import { type RunningServer, startServer } from "./server.ts"

export interface DialingServer {
  readonly server: RunningServer
  readonly api: Client
  /** A Twilio stand-in answering every call, which talks for the given time and hangs up. */
  readonly carrier: CarrierStandIn
  readonly query: <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) => Promise<
    ReadonlyArray<T>
  >
  /** The numbers the carrier was asked to call, in E.164 form, in order. */
  readonly calledNumbers: () => ReadonlyArray<string>
}

const e164 = (number: string) => (number.startsWith("+") ? number : `+${number}`)

/**
 * A server on a database of its own whose dialer polls often and whose calls end within seconds,
 * with a carrier stand-in: for tests of what the dialer calls and skips. Started before the file's
 * tests, stopped after them; read its fields inside tests only.
 */
export const dialingServerForTests = (talkMs: number): DialingServer => {
  let server: RunningServer | undefined
  let carrier: CarrierStandIn | undefined
  let api: Client | undefined
  beforeAll(async () => {
    carrier = await startCarrierStandIn("twilio", { script: () => ({ outcome: "completed", ringMs: 10, talkMs }) })
    server = await startServer({
      TALKGRAPH_SCHEDULER_POLL_MS: "200",
      TALKGRAPH_MAX_CALL_SECONDS: "3",
      TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "1"
    }, { ownDatabase: true })
    api = client(server.url)
  })
  afterAll(async () => {
    await server?.close()
    await carrier?.close()
  })
  return {
    get server() {
      return server!
    },
    get api() {
      return api!
    },
    get carrier() {
      return carrier!
    },
    query: (text) => server!.run(Effect.flatMap(SqlClient.SqlClient, text)),
    calledNumbers: () => carrier!.calls().map((call) => e164(call.to))
  }
}
