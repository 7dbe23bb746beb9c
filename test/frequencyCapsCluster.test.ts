import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client } from "./support/client.ts"
import { postgresUrl } from "./support/database.ts"
import { type DialerCluster, startDialerCluster } from "./support/dialerCluster.ts"
import { eventually, numbersFrom } from "./support/dialerFixtures.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"

const database = postgresUrl()
const offHours = { enabled: false, start: "09:00", end: "20:00", days: [1, 2, 3, 4, 5, 6, 7], holidays: [] }

// Two server processes each run one of two campaigns of the same organization over the same
// numbers, with a cap of one call per number per day: the claims of both processes race over the
// numbers (the second campaign lists them in reverse, so the two meet in the middle), and the cap,
// counted inside each claim under the organization's lock, lets each number be dialled once.
describe.skipIf(!database)("frequency caps across two processes (PostgreSQL)", () => {
  let cluster: DialerCluster
  let carrier: FakeTwilio

  beforeAll(async () => {
    carrier = await startFakeTwilio({ script: () => ({ outcome: "completed", ringMs: 20, talkMs: 200 }) })
    cluster = await startDialerCluster(database!, 2, {
      TALKGRAPH_SCHEDULER_POLL_MS: "200",
      TALKGRAPH_MAX_CALL_SECONDS: "2",
      TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "1"
    })
  }, 180_000)
  afterAll(async () => {
    await cluster?.close()
    await carrier?.close()
  })

  /**
   * Starts a campaign through `node` while the other process is stopped (SIGSTOP), so the process
   * that takes its lease is `node`; returns once it has.
   */
  const startOn = async (tenant: { token: string }, id: number, node: DialerCluster["nodes"][number]) => {
    const other = cluster.nodes.find((candidate) => candidate !== node)!
    other.proc.child.kill("SIGSTOP")
    try {
      const started = await client(node.url).post(`/api/v1/campaign/${id}/start`, undefined, { token: tenant.token })
      expect(started.status).toBe(200)
      await eventually(
        async () => {
          const { rows: [row] } = await cluster.db.query(`SELECT lease_owner FROM campaigns WHERE id = $1`, [id])
          return String(row.lease_owner).includes(`:${node.pid}:`)
        },
        10_000,
        `campaign ${id} taken by process ${node.pid}`
      )
    } finally {
      other.proc.child.kill("SIGCONT")
    }
  }

  it("dials each number exactly once across both processes; the rest wait with reason frequency_cap", async () => {
    const tenant = await cluster.newTenant(carrier)
    const api = client(cluster.nodes[0]!.url)
    const auth = { token: tenant.token }
    const policy = await api.put("/api/v1/organizations/compliance-policy", {
      calling_hours: offHours,
      frequency_caps: { per_day: 1, per_7_days: null }
    }, auth)
    expect(policy.status).toBe(200)

    const numbers = numbersFrom("+1415640", 30)
    const settings = { rate_limit_per_second: 10, max_concurrency: 5, circuit_breaker: { enabled: false } }
    const first = await cluster.newCampaign(tenant, numbers, settings, false)
    const second = await cluster.newCampaign(tenant, [...numbers].reverse(), settings, false)
    const [one, two] = cluster.nodes
    await startOn(tenant, first, one!)
    await startOn(tenant, second, two!)

    const progressOf = async (id: number) => (await api.get(`/api/v1/campaign/${id}/progress`, auth)).body
    const settled = await eventually(
      async () => {
        const both = await Promise.all([progressOf(first), progressOf(second)])
        return both.every((progress) =>
            progress.completed + progress.waiting_for_frequency_cap === numbers.length &&
            progress.pending === progress.waiting_for_frequency_cap
          )
          ? both
          : undefined
      },
      60_000,
      "every contact called or waiting for the cap"
    )

    const dialled = new Map<string, number>()
    for (const call of carrier.calls()) dialled.set(call.to, (dialled.get(call.to) ?? 0) + 1)
    expect([...dialled.keys()].sort()).toEqual(numbers)
    expect([...dialled.values()].every((count) => count === 1)).toBe(true)
    expect(settled[0].completed + settled[1].completed).toBe(numbers.length)
    expect(settled[0].waiting_for_frequency_cap + settled[1].waiting_for_frequency_cap).toBe(numbers.length)
    // Both processes dialled: each campaign stayed with the process that took it.
    expect(settled[0].completed).toBeGreaterThan(0)
    expect(settled[1].completed).toBeGreaterThan(0)
    const { rows: owners } = await cluster.db.query(
      `SELECT id, lease_owner FROM campaigns WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [[first, second]]
    )
    expect(String(owners[0].lease_owner)).toContain(`:${one!.pid}:`)
    expect(String(owners[1].lease_owner)).toContain(`:${two!.pid}:`)

    // Every uncalled contact waits with the reason, in the campaign whose process lost the race for it.
    const { rows: waiting } = await cluster.db.query(
      `SELECT phone_number, skip_reason, next_attempt_at > now() + interval '23 hours' AS next_day
       FROM campaign_contacts WHERE campaign_id = ANY($1::bigint[]) AND state = 'pending'`,
      [[first, second]]
    )
    expect(waiting).toHaveLength(numbers.length)
    expect(waiting.every((row) => row.skip_reason === "frequency_cap" && row.next_day)).toBe(true)
    expect(waiting.map((row) => row.phone_number).sort()).toEqual(numbers)
  }, 150_000)
})
