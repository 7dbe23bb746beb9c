import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postgresUrl } from "./support/database.ts"
import { type DialerCluster, startDialerCluster } from "./support/dialerCluster.ts"
import { eventually, numbersFrom } from "./support/dialerFixtures.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"

const database = postgresUrl()

describe.skipIf(!database)("a dialer process killed mid-campaign (PostgreSQL)", () => {
  let cluster: DialerCluster
  let carrier: FakeTwilio

  beforeAll(async () => {
    carrier = await startFakeTwilio({ script: () => ({ outcome: "completed", ringMs: 30, talkMs: 300 }) })
    cluster = await startDialerCluster(database!, 2, {
      TALKGRAPH_CAMPAIGN_LEASE_SECONDS: "3",
      TALKGRAPH_SCHEDULER_POLL_MS: "250",
      TALKGRAPH_MAX_CALL_SECONDS: "2",
      TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "1"
    })
  }, 180_000)
  afterAll(async () => {
    await cluster?.close()
    await carrier?.close()
  })

  it("is taken over by the other process, and every contact is dialled exactly once", async () => {
    const tenant = await cluster.newTenant(carrier)
    const numbers = numbersFrom("+1415300", 40)
    const id = await cluster.newCampaign(tenant, numbers, {
      rate_limit_per_second: 8,
      circuit_breaker: { enabled: false }
    })
    await eventually(async () => carrier.calls().length >= 10, 20_000, "ten calls placed")

    const { rows: [lease] } = await cluster.db.query(`SELECT lease_owner FROM campaigns WHERE id = $1`, [id])
    const holder = cluster.nodes.find((node) => String(lease.lease_owner).includes(`:${node.pid}:`))!
    const survivor = cluster.nodes.find((node) => node !== holder)!
    holder.proc.child.kill("SIGKILL")
    const killedAt = Date.now()
    await holder.proc.exited

    // A call request the killed process sent just before it died can reach the carrier after the
    // kill: only calls placed once the survivor holds the lease show that dialling resumed there.
    await eventually(
      async () => {
        const { rows: [after] } = await cluster.db.query(`SELECT lease_owner FROM campaigns WHERE id = $1`, [id])
        return String(after.lease_owner).includes(`:${survivor.pid}:`)
      },
      20_000,
      "the lease taken over by the survivor"
    )
    const placedAtTakeover = carrier.calls().length
    await eventually(async () => carrier.calls().length > placedAtTakeover, 20_000, "dialling resumed elsewhere")
    const takeoverMs = Date.now() - killedAt
    expect(takeoverMs).toBeLessThan(20_000)
    const { rows: [after] } = await cluster.db.query(`SELECT lease_owner FROM campaigns WHERE id = $1`, [id])
    expect(String(after.lease_owner)).toContain(`:${survivor.pid}:`)

    await eventually(
      async () => {
        const { rows: [row] } = await cluster.db.query(`SELECT state FROM campaigns WHERE id = $1`, [id])
        return row.state === "completed"
      },
      60_000,
      "campaign completed"
    )

    const dialled = new Map<string, number>()
    for (const call of carrier.calls()) dialled.set(call.to, (dialled.get(call.to) ?? 0) + 1)
    expect([...dialled.values()].every((count) => count === 1)).toBe(true)
    const { rows: contacts } = await cluster.db.query(
      `SELECT c.phone_number, c.state, c.attempt_count, a.end_reason
       FROM campaign_contacts c JOIN campaign_attempts a ON a.contact_id = c.id WHERE c.campaign_id = $1`,
      [id]
    )
    expect(contacts).toHaveLength(40)
    for (const contact of contacts) {
      expect(contact.attempt_count).toBe(1)
      // A contact claimed by the killed process but never sent to the carrier is failed, not re-dialled.
      if (!dialled.has(contact.phone_number)) expect(contact.end_reason).toBe("no_carrier_response")
      else expect(contact.state).toBe("completed")
    }
    const { rows: [campaign] } = await cluster.db.query(
      `SELECT processed_rows, executed_count, total_queued_count FROM campaigns WHERE id = $1`,
      [id]
    )
    expect(campaign).toEqual({ processed_rows: 40, executed_count: 40, total_queued_count: 40 })
  }, 120_000)
})
