/**
 * Campaign dispatch against the loopback Twilio carrier, with real `talkgraph serve` processes on
 * PostgreSQL (a fresh database created for the run and dropped after):
 *   1. rate accuracy at 1, 5, 20 and 100 calls/s (each campaign runs RATE_SECONDS, not 60 s);
 *   2. concurrency-cap violations;
 *   3. peak dispatch throughput of one process across many campaigns;
 *   4. takeover time after SIGKILL with three processes, duplicates and lost contacts.
 * Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/campaignDispatch.ts
 */
import { startDialerCluster } from "../test/support/dialerCluster.ts"
import { numbersFrom } from "../test/support/dialerFixtures.ts"
import { type FakeCall, startFakeTwilio } from "../test/support/fakeTwilio.ts"

const BASE = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const RATE_SECONDS = 15

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await sleep(100)
  }
  return false
}

const busiestSecond = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  let best = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1000) j++
    best = Math.max(best, i - j + 1)
  }
  return best
}

const achievedRate = (times: ReadonlyArray<number>) => {
  if (times.length < 2) return 0
  const sorted = [...times].sort((a, b) => a - b)
  return (sorted.length - 1) / ((sorted.at(-1)! - sorted[0]!) / 1000)
}

/** Calls that started while `cap` or more others of the same set were still live. */
const capViolations = (calls: ReadonlyArray<FakeCall>, cap: number) =>
  calls.filter((call) => calls.filter((other) => other.createdAt <= call.createdAt && (other.endedAt ?? Infinity) > call.createdAt).length > cap)
    .length

const section = (title: string) => console.log(`\n== ${title}`)

const scripts = new Map<string, "completed" | "silent">()
const carrier = await startFakeTwilio({
  script: ({ to }) => (scripts.get(to.slice(0, 8)) === "silent" ? { outcome: "silent" } : { outcome: "completed", ringMs: 20, talkMs: 150 })
})
const callsWithPrefix = (prefix: string) => carrier.calls().filter((call) => call.to.startsWith(prefix))

const single = await startDialerCluster(BASE, 1, { TALKGRAPH_ORG_MAX_CONCURRENT_CALLS: "100000", TALKGRAPH_SCHEDULER_POLL_MS: "500" })
try {
  section(`rate accuracy (${RATE_SECONDS} s per rate, all four campaigns at once, one process)`)
  const rates = [1, 5, 20, 100]
  const rateRuns = await Promise.all(rates.map(async (rate, index) => {
    const tenant = await single.newTenant(carrier)
    const prefix = `+141620${index}`
    await single.newCampaign(tenant, numbersFrom(prefix, rate * RATE_SECONDS), { rate_limit_per_second: rate, circuit_breaker: { enabled: false } })
    return { rate, prefix }
  }))
  await waitFor(() => rateRuns.every(({ rate, prefix }) => callsWithPrefix(prefix).length >= rate * RATE_SECONDS), (RATE_SECONDS + 20) * 1000)
  for (const { rate, prefix } of rateRuns) {
    const times = callsWithPrefix(prefix).map((call) => call.createdAt)
    console.log(
      `rate ${String(rate).padStart(3)}/s: ${String(times.length).padStart(4)} calls, max in any 1 s window ${busiestSecond(times)}, achieved ${achievedRate(times).toFixed(2)}/s`
    )
  }

  section("concurrency cap (max_concurrency 10, rate 50/s, 150 ms calls, 300 contacts)")
  const capTenant = await single.newTenant(carrier)
  await single.newCampaign(capTenant, numbersFrom("+1416500", 300), { max_concurrency: 10, rate_limit_per_second: 50, circuit_breaker: { enabled: false } })
  await waitFor(() => callsWithPrefix("+1416500").length >= 300 && callsWithPrefix("+1416500").every((call) => call.endedAt !== null), 60_000)
  const capCalls = callsWithPrefix("+1416500")
  const peak = Math.max(...capCalls.map((call) => capCalls.filter((other) => other.createdAt <= call.createdAt && (other.endedAt ?? Infinity) > call.createdAt).length))
  console.log(`calls ${capCalls.length}, peak live ${peak}, cap violations ${capViolations(capCalls, 10)}`)

  section("peak dispatch throughput (one process, 20 campaigns of 4 organizations at 100/s each, calls left ringing)")
  const campaigns = 20
  const perCampaign = 400
  for (let index = 0; index < campaigns; index++) scripts.set(`+14177${String(index).padStart(2, "0")}`.slice(0, 8), "silent")
  const throughputTenants = await Promise.all(Array.from({ length: 4 }, () => single.newTenant(carrier)))
  const started = Date.now()
  await Promise.all(Array.from({ length: campaigns }, (_, index) =>
    single.newCampaign(throughputTenants[index % 4]!, numbersFrom(`+14177${String(index).padStart(2, "0")}`, perCampaign), {
      rate_limit_per_second: 100,
      circuit_breaker: { enabled: false }
    })
  ))
  await waitFor(() => callsWithPrefix("+14177").length >= campaigns * perCampaign, 90_000)
  const placed = callsWithPrefix("+14177").map((call) => call.createdAt).sort((a, b) => a - b)
  const busiest = busiestSecond(placed)
  console.log(
    `${placed.length} calls placed; busiest second ${busiest} calls/s; sustained ${achievedRate(placed).toFixed(0)} calls/s ` +
      `(theoretical ${campaigns * 100}/s); ${((placed.at(-1)! - started) / 1000).toFixed(1)} s from first start request`
  )
} finally {
  await single.close()
}

section("takeover after SIGKILL (three processes, lease 10 s, campaign at 20/s, 600 contacts)")
const cluster = await startDialerCluster(BASE, 3, {
  TALKGRAPH_CAMPAIGN_LEASE_SECONDS: "10",
  TALKGRAPH_MAX_CALL_SECONDS: "5",
  TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "2"
})
try {
  const tenant = await cluster.newTenant(carrier)
  const numbers = numbersFrom("+1418800", 600)
  const id = await cluster.newCampaign(tenant, numbers, { rate_limit_per_second: 20, circuit_breaker: { enabled: false } })
  await waitFor(() => callsWithPrefix("+1418800").length >= 100, 30_000)
  const { rows: [lease] } = await cluster.db.query(`SELECT lease_owner FROM campaigns WHERE id = $1`, [id])
  const holder = cluster.nodes.find((node) => String(lease.lease_owner).includes(`:${node.pid}:`))!
  holder.proc.child.kill("SIGKILL")
  const killedAt = Date.now()
  const atKill = callsWithPrefix("+1418800").length
  await waitFor(() => callsWithPrefix("+1418800").length > atKill + 0 && Date.now() - killedAt > 0, 60_000)
  const resumedAfter = Date.now() - killedAt
  await waitFor(async () => (await cluster.db.query(`SELECT state FROM campaigns WHERE id = $1`, [id])).rows[0].state === "completed", 120_000)
  const dialled = new Map<string, number>()
  for (const call of callsWithPrefix("+1418800")) dialled.set(call.to, (dialled.get(call.to) ?? 0) + 1)
  const duplicates = [...dialled.values()].filter((count) => count > 1).length
  const { rows: contacts } = await cluster.db.query(
    `SELECT c.phone_number, c.state, a.end_reason FROM campaign_contacts c LEFT JOIN campaign_attempts a ON a.contact_id = c.id WHERE c.campaign_id = $1`,
    [id]
  )
  const unfinished = contacts.filter((contact) => contact.state !== "completed" && contact.state !== "failed").length
  const neverSent = contacts.filter((contact) => !dialled.has(contact.phone_number)).length
  const { rows: [campaign] } = await cluster.db.query(`SELECT state, processed_rows, executed_count FROM campaigns WHERE id = $1`, [id])
  console.log(
    `takeover: dialling resumed ${(resumedAfter / 1000).toFixed(1)} s after SIGKILL; campaign ${campaign.state}, ` +
      `processed ${campaign.processed_rows}/600, attempts ${campaign.executed_count}; duplicates ${duplicates}; ` +
      `lost ${unfinished}; claimed but never sent by the killed process (failed as no_carrier_response) ${neverSent}`
  )
} finally {
  await cluster.close()
  await carrier.close()
}
