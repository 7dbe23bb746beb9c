/**
 * Campaign dispatch against the loopback Twilio carrier, with real `talkgraph serve` processes on
 * PostgreSQL (a fresh database created for the run and dropped after):
 *   rate       rate accuracy at 1, 5, 20 and 100 calls/s, one campaign each, all at once;
 *   aggregate  five campaigns of one organization at 100/s each (500/s in all);
 *   cap        concurrency-cap violations;
 *   throughput peak dispatch throughput of one process across many campaigns;
 *   completed  the same with calls that are answered and complete (status callbacks, answer document,
 *              outcome, counters, contact completed): completed calls per second, CPU per call and
 *              what the database wrote per call (WAL, and how many run updates were heap-only);
 *   takeover   takeover time after SIGKILL with three processes, duplicates and lost contacts.
 * Rates are measured where they matter, at the carrier (the time it receives each call request).
 * Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/campaignDispatch.ts
 *   BENCH_SECTIONS=rate,throughput (default: all)   BENCH_RATE_SECONDS=60 (default 15)
 *   BENCH_COMPLETED_PER_CAMPAIGN=500 BENCH_COMPLETED_RATE=100 (the completed section's size and per-campaign rate)
 *   BENCH_LOG_LEVEL=error (the server's log level, default warning: what it logged is printed when
 *   callbacks were refused or attempts were not placed, so a run's tail shows its cause)
 *   TALKGRAPH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server process
 *   BENCH_DIRECT=1 (rate, aggregate, cap, throughput, completed) the carrier calls the one process back
 *   directly, with no balancer in front of it (the balancer's work is otherwise part of this process's CPU)
 */
import * as fs from "node:fs"
import { type DialerCluster, startDialerCluster } from "../test/support/dialerCluster.ts"
import { numbersFrom } from "../test/support/dialerFixtures.ts"
import { type FakeCall, startFakeTwilio } from "../test/support/fakeTwilio.ts"
import { TIMED_OUT } from "../test/support/loopbackCarrier.ts"
import { machine, reportFigures } from "./support/figures.ts"

const BASE = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 15)
const DIRECT = process.env.BENCH_DIRECT === "1"
/** What runs in this process beside the bench's own polling, and is the load. */
const LOAD = DIRECT ? "the carrier stand-in" : "the carrier stand-in and the balancer"
const SECTIONS = new Set((process.env.BENCH_SECTIONS ?? "rate,aggregate,cap,throughput,completed,takeover").split(","))

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
  calls.filter((call) =>
    calls.filter((other) => other.createdAt <= call.createdAt && (other.endedAt ?? Infinity) > call.createdAt).length >
      cap
  )
    .length

const section = (title: string) => console.log(`\n== ${title}`)

/** CPU seconds a process has used so far (Linux), or NaN where /proc is not there. */
const cpuSeconds = (pid: number) => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

/**
 * CPU used by the talkgraph process and by its database sessions while `work` runs. On a shared
 * machine wall-clock rates depend on what else runs; CPU per call mostly does not.
 */
const measuringCpu = async <A>(cluster: DialerCluster, work: () => Promise<A>) => {
  const benchBefore = process.cpuUsage()
  const backends = async () =>
    (await cluster.db.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`
    ))
      .rows.map((row) => Number(row.pid))
  const seen = new Map<number, number>()
  const sample = async () => {
    for (const pid of await backends()) {
      const used = cpuSeconds(pid)
      if (!Number.isNaN(used)) seen.set(pid, Math.max(seen.get(pid) ?? used, used))
    }
  }
  await sample()
  const databaseBefore = new Map(seen)
  const serverBefore = cpuSeconds(cluster.nodes[0]!.pid)
  const sampler = setInterval(() => void sample(), 500)
  const result = await work()
  clearInterval(sampler)
  await sample()
  const server = cpuSeconds(cluster.nodes[0]!.pid) - serverBefore
  const benchUsed = process.cpuUsage(benchBefore)
  let database = 0
  for (const [pid, used] of seen) database += used - (databaseBefore.get(pid) ?? 0)
  // This process is the load (LOAD) and the polling.
  return { result, server, database, load: (benchUsed.user + benchUsed.system) / 1e6 }
}

const cpuLine = (cpu: { server: number; database: number; load: number }, calls: number) =>
  `CPU per call: talkgraph ${((cpu.server * 1000) / calls).toFixed(2)} ms, database ${
    ((cpu.database * 1000) / calls).toFixed(2)
  } ms, ${LOAD} with the polling ${((cpu.load * 1000) / calls).toFixed(2)} ms ` +
  `(${cpu.server.toFixed(1)} s, ${cpu.database.toFixed(1)} s and ${cpu.load.toFixed(1)} s for ${calls} calls)`

/**
 * What the database wrote: WAL bytes and records (the whole server's: run nothing else beside the
 * bench) and how many updates of `runs` were heap-only, i.e. wrote no index entry. A non-HOT
 * update of a run writes into every one of its indexes, the bulk of a completed call's database work.
 */
const writeCounters = async (cluster: DialerCluster) => {
  // Backends report their statistics at most once a second.
  await sleep(1100)
  const { rows: [row] } = await cluster.db.query(
    `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS wal_bytes, (SELECT wal_records FROM pg_stat_wal) AS wal_records,
            coalesce((SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'runs'), 0) AS run_updates,
            coalesce((SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'runs'), 0) AS run_hot_updates,
            (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()) AS transactions`
  )
  return {
    transactions: Number(row.transactions),
    walBytes: Number(row.wal_bytes),
    walRecords: Number(row.wal_records),
    runUpdates: Number(row.run_updates),
    runHotUpdates: Number(row.run_hot_updates)
  }
}

type WriteCounters = Awaited<ReturnType<typeof writeCounters>>

const writesLine = (before: WriteCounters, after: WriteCounters, calls: number) => {
  const updates = after.runUpdates - before.runUpdates
  const hot = after.runHotUpdates - before.runHotUpdates
  return `database writes per call: ${((after.walBytes - before.walBytes) / calls / 1024).toFixed(1)} kB of WAL in ${
    ((after.walRecords - before.walRecords) / calls).toFixed(0)
  } records; run updates ${(updates / calls).toFixed(1)} a call, ${
    updates > 0 ? ((100 * hot) / updates).toFixed(0) : "0"
  }% heap-only (no index entries); ${
    ((after.transactions - before.transactions) / calls).toFixed(2)
  } transactions a call (each statement outside a transaction is one; the bench's own polling adds ~10 a second)`
}

const scripts = new Map<string, "completed" | "silent">()
const carrier = await startFakeTwilio({
  script: (
    { to }
  ) => (scripts.get(to.slice(0, 8)) === "silent"
    ? { outcome: "silent" }
    : { outcome: "completed", ringMs: 20, talkMs: 150 })
})
const callsWithPrefix = (prefix: string) => carrier.calls().filter((call) => call.to.startsWith(prefix))

/**
 * A new tenant, asked for again if the request was cut: after a long busy section an idle
 * keep-alive connection may be closed by the server just as it is reused (ECONNRESET).
 */
const newTenant = async (cluster: DialerCluster) => {
  try {
    return await cluster.newTenant(carrier)
  } catch (error) {
    if ((error as Error).message !== "fetch failed") throw error
    return await cluster.newTenant(carrier)
  }
}

const rateLine = (label: string, times: ReadonlyArray<number>, limit: number) =>
  `${label}: ${String(times.length).padStart(5)} calls, max in any 1 s window ${
    busiestSecond(times)
  } (limit ${limit}), ` +
  `achieved ${achievedRate(times).toFixed(2)}/s`

const single = await startDialerCluster(BASE, 1, {
  TALKGRAPH_ORG_MAX_CONCURRENT_CALLS: "100000",
  TALKGRAPH_SCHEDULER_POLL_MS: "500",
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warning",
  // 0 measures the process without its hold on new calls while its event loop is saturated.
  ...(process.env.TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT === undefined
    ? {}
    : { TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT: process.env.TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT })
}, { direct: DIRECT })
try {
  if (SECTIONS.has("rate")) {
    section(`rate accuracy (${RATE_SECONDS} s per rate, all four campaigns at once, one process)`)
    const rates = [1, 5, 20, 100]
    const rateRuns = await Promise.all(rates.map(async (rate, index) => {
      const tenant = await newTenant(single)
      const prefix = `+141620${index}`
      const settings = { rate_limit_per_second: rate, circuit_breaker: { enabled: false } }
      return {
        rate,
        prefix,
        tenant,
        id: await single.newCampaign(tenant, numbersFrom(prefix, rate * RATE_SECONDS), settings, false)
      }
    }))
    const cpu = await measuringCpu(single, async () => {
      await Promise.all(rateRuns.map(({ tenant, id }) => single.startCampaign(tenant, id)))
      await waitFor(
        () => rateRuns.every(({ rate, prefix }) => callsWithPrefix(prefix).length >= rate * RATE_SECONDS),
        (RATE_SECONDS + 20) * 1000
      )
    })
    for (const { rate, prefix } of rateRuns) {
      console.log(
        rateLine(`rate ${String(rate).padStart(3)}/s`, callsWithPrefix(prefix).map((call) => call.createdAt), rate)
      )
    }
    console.log(cpuLine(cpu, rateRuns.reduce((sum, { prefix }) => sum + callsWithPrefix(prefix).length, 0)))
  }

  if (SECTIONS.has("aggregate")) {
    section(
      `aggregate rate (${RATE_SECONDS} s, five campaigns of one organization at 100/s each: 500/s in all, one process)`
    )
    const tenant = await newTenant(single)
    const prefixes = Array.from({ length: 5 }, (_, index) => `+141621${index}`)
    const ids = await Promise.all(
      prefixes.map((prefix) =>
        single.newCampaign(tenant, numbersFrom(prefix, 100 * RATE_SECONDS), {
          rate_limit_per_second: 100,
          circuit_breaker: { enabled: false }
        }, false)
      )
    )
    const cpu = await measuringCpu(single, async () => {
      await Promise.all(ids.map((id) => single.startCampaign(tenant, id)))
      await waitFor(
        () => prefixes.every((prefix) => callsWithPrefix(prefix).length >= 100 * RATE_SECONDS),
        (RATE_SECONDS + 30) * 1000
      )
    })
    for (const prefix of prefixes) {
      console.log(rateLine(`campaign ${prefix}`, callsWithPrefix(prefix).map((call) => call.createdAt), 100))
    }
    console.log(rateLine("all five", callsWithPrefix("+141621").map((call) => call.createdAt), 500))
    console.log(cpuLine(cpu, callsWithPrefix("+141621").length))
  }

  if (SECTIONS.has("cap")) {
    section("concurrency cap (max_concurrency 10, rate 50/s, 150 ms calls, 300 contacts)")
    const capTenant = await newTenant(single)
    await single.newCampaign(capTenant, numbersFrom("+1416500", 300), {
      max_concurrency: 10,
      rate_limit_per_second: 50,
      circuit_breaker: { enabled: false }
    })
    await waitFor(
      () =>
        callsWithPrefix("+1416500").length >= 300 && callsWithPrefix("+1416500").every((call) => call.endedAt !== null),
      60_000
    )
    const capCalls = callsWithPrefix("+1416500")
    const peak = Math.max(
      ...capCalls.map((call) =>
        capCalls.filter((other) => other.createdAt <= call.createdAt && (other.endedAt ?? Infinity) > call.createdAt)
          .length
      )
    )
    console.log(`calls ${capCalls.length}, peak live ${peak}, cap violations ${capViolations(capCalls, 10)}`)
  }

  if (SECTIONS.has("throughput")) {
    section(
      "peak dispatch throughput (one process, 20 campaigns of 4 organizations at 100/s each, started together, calls left ringing)"
    )
    const campaigns = 20
    const perCampaign = 400
    for (let index = 0; index < campaigns; index++) {
      scripts.set(`+14177${String(index).padStart(2, "0")}`.slice(0, 8), "silent")
    }
    const throughputTenants = await Promise.all(Array.from({ length: 4 }, () => newTenant(single)))
    // Created first and started together: what is measured is dialling, not CSV ingestion.
    const ids = await Promise.all(
      Array.from({ length: campaigns }, (_, index) =>
        single.newCampaign(
          throughputTenants[index % 4]!,
          numbersFrom(`+14177${String(index).padStart(2, "0")}`, perCampaign),
          {
            rate_limit_per_second: 100,
            circuit_breaker: { enabled: false }
          },
          false
        ))
    )
    const started = Date.now()
    const cpu = await measuringCpu(single, async () => {
      await Promise.all(ids.map((id, index) => single.startCampaign(throughputTenants[index % 4]!, id)))
      await waitFor(() => callsWithPrefix("+14177").length >= campaigns * perCampaign, 90_000)
    })
    const placed = callsWithPrefix("+14177").map((call) => call.createdAt).sort((a, b) => a - b)
    const perCampaignBusiest = Math.max(
      ...Array.from(
        { length: campaigns },
        (_, index) =>
          busiestSecond(callsWithPrefix(`+14177${String(index).padStart(2, "0")}`).map((call) => call.createdAt))
      )
    )
    console.log(
      `${placed.length} calls placed; busiest second ${busiestSecond(placed)} calls/s; sustained ${
        achievedRate(placed).toFixed(0)
      } calls/s ` +
        `(theoretical ${campaigns * 100}/s); busiest second of any one campaign ${perCampaignBusiest} (limit 100); ` +
        `${((placed.at(-1)! - started) / 1000).toFixed(1)} s from the start requests to the last call`
    )
    console.log(cpuLine(cpu, placed.length))
  }

  if (SECTIONS.has("completed")) {
    const campaigns = 20
    const perCampaign = Number(process.env.BENCH_COMPLETED_PER_CAMPAIGN ?? 500)
    const rate = Number(process.env.BENCH_COMPLETED_RATE ?? 100)
    section(
      `completed calls (one process, ${campaigns} campaigns of 4 organizations at ${rate}/s each, ${
        campaigns * perCampaign
      } contacts; each call rings 20 ms, is answered, talks 150 ms and completes with signed status callbacks)`
    )
    const tenants = await Promise.all(Array.from({ length: 4 }, () => newTenant(single)))
    const ids = await Promise.all(
      Array.from({ length: campaigns }, (_, index) =>
        single.newCampaign(
          tenants[index % 4]!,
          numbersFrom(`+14178${String(index).padStart(2, "0")}`, perCampaign),
          { rate_limit_per_second: rate, circuit_breaker: { enabled: false } },
          false
        ))
    )
    const finished = async () =>
      Number(
        (await single.db.query(
          `SELECT count(*) AS n FROM campaign_contacts WHERE campaign_id = ANY($1) AND state IN ('completed', 'failed')`,
          [ids]
        )).rows[0].n
      )
    const samples: Array<{ readonly at: number; readonly count: number }> = []
    const writesBefore = await writeCounters(single)
    const started = Date.now()
    const cpu = await measuringCpu(single, async () => {
      await Promise.all(ids.map((id, index) => single.startCampaign(tenants[index % 4]!, id)))
      await waitFor(async () => {
        const count = await finished()
        samples.push({ at: Date.now(), count })
        return count >= campaigns * perCampaign
      }, 180_000)
    })
    const elapsed = (Date.now() - started) / 1000
    const done = await finished()
    const completedCalls = callsWithPrefix("+14178").filter((call) => call.status === "completed").length
    const states = (await single.db.query(
      `SELECT state, count(*) AS n FROM campaign_contacts WHERE campaign_id = ANY($1) GROUP BY state ORDER BY state`,
      [ids]
    )).rows.map((row) => `${row.state} ${row.n}`).join(", ")
    // Polled about every 100 ms: the busiest second is the largest growth over any span of samples of at least 1 s.
    let busiest = 0
    for (let end = 0, start = 0; end < samples.length; end++) {
      while (start + 1 < end && samples[end]!.at - samples[start + 1]!.at >= 1000) start++
      const span = samples[end]!.at - samples[start]!.at
      if (span >= 1000) busiest = Math.max(busiest, ((samples[end]!.count - samples[start]!.count) * 1000) / span)
    }
    console.log(
      `${done} contacts finished (${states}) in ${elapsed.toFixed(1)} s: ${
        (done / elapsed).toFixed(0)
      } completed calls/s ` +
        `sustained, ${busiest.toFixed(0)} in the busiest second (theoretical ${
          campaigns * rate
        }/s); carrier saw ${completedCalls} completed calls`
    )
    console.log(cpuLine(cpu, done))
    console.log(writesLine(writesBefore, await writeCounters(single), done))
    // Every process of the run shares this machine, so its cores bound the rate whatever talkgraph
    // does: at 500 calls/s they leave cores × 2 ms for each call's talkgraph, database and carrier together.
    const perCall = (seconds: number) => Math.round((seconds * 10_000) / done) / 10
    const wholeCall = perCall(cpu.server + cpu.database + cpu.load)
    const cores = machine().cores
    console.log(
      `this machine's ${cores} cores carry at most ${
        Math.round((cores * 1000) / wholeCall)
      } completed calls/s at these costs (${wholeCall} ms of CPU a call, every process counted); ` +
        `500/s leaves ${(cores * 1000) / 500} ms a call for all of them, of which ${LOAD} alone used ${
          perCall(cpu.load)
        }`
    )
    reportFigures(`completed campaign calls (${done} contacts)`, "PostgreSQL", [
      {
        name: "completed calls per second, sustained",
        value: Math.round(done / elapsed),
        unit: "calls/s",
        target: ">= 500"
      },
      { name: "CPU per completed call: talkgraph", value: perCall(cpu.server), unit: "ms" },
      { name: "… the database", value: perCall(cpu.database), unit: "ms" },
      {
        name: `… the bench's (${DIRECT ? "carrier" : "carrier, balancer"}, polling)`,
        value: perCall(cpu.load),
        unit: "ms"
      },
      {
        name: "most calls/s this machine carries at these costs",
        value: Math.round((cores * 1000) / wholeCall),
        unit: "calls/s"
      }
    ])
    const unsuccessful = await single.db.query(
      `SELECT a.end_reason, left(r.error, 120) AS error, count(*) AS n FROM campaign_attempts a
       LEFT JOIN runs r ON r.id = a.run_id
       WHERE a.campaign_id = ANY($1) AND a.outcome IS DISTINCT FROM 'completed' GROUP BY 1, 2 ORDER BY 3 DESC`,
      [ids]
    )
    for (const row of unsuccessful.rows) {
      console.log(`attempts not completed: ${row.n} × ${row.end_reason}: ${row.error}`)
    }
    // A backlog (calls placed faster than their callbacks are served) or a long tail (retries after
    // failed placements) shows here, not in the busiest second.
    const marks: Array<number> = []
    for (let mark = 5_000; mark - 5_000 < elapsed * 1000; mark += 5_000) marks.push(mark)
    const everyFiveSeconds = (count: (mark: number) => number | string) =>
      marks.map((mark) => `${mark / 1000} s ${count(mark)}`).join(", ")
    const benchCalls = callsWithPrefix("+14178")
    const reachedBy = (times: ReadonlyArray<number | null>) => (mark: number) =>
      times.filter((time) => time !== null && time - started <= mark).length
    console.log(
      `by time, calls placed at the carrier: ${everyFiveSeconds(reachedBy(benchCalls.map((call) => call.createdAt)))}`
    )
    console.log(
      `          ended at the carrier: ${everyFiveSeconds(reachedBy(benchCalls.map((call) => call.endedAt)))}`
    )
    console.log(
      `          contacts finished: ${
        everyFiveSeconds((mark) => samples.filter((sample) => sample.at - started <= mark).at(-1)?.count ?? 0)
      }`
    )
    // How long talkgraph took to answer the carrier's callbacks sent during the run, by when they were
    // sent: a queue inside the server shows as answers that grow slower while calls keep ending.
    const answered = carrier.callbackTimes().filter((time) => time.sentAt >= started)
    const percentile = (values: ReadonlyArray<number>, p: number) =>
      values.length === 0
        ? 0
        : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!
    const answerFigures = (times: typeof answered) =>
      `p50 ${percentile(times.map((time) => time.ms), 0.5)} / p95 ${
        percentile(times.map((time) => time.ms), 0.95)
      } / max ${percentile(times.map((time) => time.ms), 1)} ms`
    // Twilio waits 15 s for the answer document (then the call fails with error 11200), and as
    // long for a status callback (then it is lost); the stand-in gives up as Twilio does.
    const late = carrier.callbackFailures().filter((failure) => failure.includes(TIMED_OUT)).length
    console.log(
      `callbacks answered: ${answered.length}, ${
        answerFigures(answered)
      }; not answered within Twilio's 15 s (the call failed, or the callback was lost): ${late}`
    )
    console.log(
      `          by when sent: ${
        everyFiveSeconds((mark) => {
          const window = answered.filter((time) =>
            time.sentAt - started > mark - 5_000 && time.sentAt - started <= mark
          )
          return window.length === 0 ? "-" : answerFigures(window)
        })
      }`
    )
    const byReason = (failures: ReadonlyArray<string>) => {
      const counts = new Map<string, number>()
      for (const failure of failures) {
        const [url = "", text = ""] = failure.split(" → ")
        const reason = `${new URL(url).pathname.replace(/\d+/g, "N")} → ${text.slice(0, 120)}`
        counts.set(reason, (counts.get(reason) ?? 0) + 1)
      }
      return counts
    }
    // A callback whose connection failed is sent again, as Twilio does (connection overrides, rc=1).
    for (const [reason, count] of byReason(carrier.callbackRetries())) {
      console.log(`callbacks sent again: ${count} × ${reason}`)
    }
    const refused = byReason(carrier.callbackFailures())
    for (const [reason, count] of refused) console.log(`callbacks failed: ${count} × ${reason}`)
    for (const [code, count] of single.balancer.forwardFailures()) {
      console.log(`the balancer could not forward ${count} requests: ${code}`)
    }
    if (refused.size > 0 || unsuccessful.rows.length > 0) {
      const warnings = single.nodes[0]!.proc.output().split("\n").filter((line) => !line.includes("DeprecationWarning"))
      console.log(`server's last words:\n${warnings.slice(-30).join("\n").slice(-6000)}`)
    }
  }
} finally {
  await single.close()
}

if (SECTIONS.has("takeover")) {
  section("takeover after SIGKILL (three processes, lease 10 s, campaign at 20/s, 600 contacts)")
  const cluster = await startDialerCluster(BASE, 3, {
    TALKGRAPH_CAMPAIGN_LEASE_SECONDS: "10",
    TALKGRAPH_MAX_CALL_SECONDS: "5",
    TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "2"
  })
  try {
    const tenant = await newTenant(cluster)
    const numbers = numbersFrom("+1418800", 600)
    const id = await cluster.newCampaign(tenant, numbers, {
      rate_limit_per_second: 20,
      circuit_breaker: { enabled: false }
    })
    await waitFor(() => callsWithPrefix("+1418800").length >= 100, 30_000)
    const { rows: [lease] } = await cluster.db.query(`SELECT lease_owner FROM campaigns WHERE id = $1`, [id])
    const holder = cluster.nodes.find((node) => String(lease.lease_owner).includes(`:${node.pid}:`))!
    holder.proc.child.kill("SIGKILL")
    const killedAt = Date.now()
    const atKill = callsWithPrefix("+1418800").length
    await waitFor(() => callsWithPrefix("+1418800").length > atKill, 60_000)
    const resumedAfter = Date.now() - killedAt
    await waitFor(
      async () =>
        (await cluster.db.query(`SELECT state FROM campaigns WHERE id = $1`, [id])).rows[0].state === "completed",
      120_000
    )
    const dialled = new Map<string, number>()
    for (const call of callsWithPrefix("+1418800")) dialled.set(call.to, (dialled.get(call.to) ?? 0) + 1)
    const duplicates = [...dialled.values()].filter((count) => count > 1).length
    const { rows: contacts } = await cluster.db.query(
      `SELECT c.phone_number, c.state, a.end_reason FROM campaign_contacts c LEFT JOIN campaign_attempts a ON a.contact_id = c.id WHERE c.campaign_id = $1`,
      [id]
    )
    const unfinished = contacts.filter((contact) => contact.state !== "completed" && contact.state !== "failed").length
    const neverSent = contacts.filter((contact) => !dialled.has(contact.phone_number)).length
    const { rows: [campaign] } = await cluster.db.query(
      `SELECT state, processed_rows, executed_count FROM campaigns WHERE id = $1`,
      [id]
    )
    console.log(
      `takeover: dialling resumed ${(resumedAfter / 1000).toFixed(1)} s after SIGKILL; campaign ${campaign.state}, ` +
        `processed ${campaign.processed_rows}/600, attempts ${campaign.executed_count}; duplicates ${duplicates}; ` +
        `lost ${unfinished}; claimed but never sent by the killed process (failed as no_carrier_response) ${neverSent}`
    )
  } finally {
    await cluster.close()
  }
}
await carrier.close()
