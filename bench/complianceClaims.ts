/**
 * The dialer with every calling rule on, on PostgreSQL (a fresh database, dropped after), against the
 * loopback Twilio carrier:
 *   import   do-not-call CSV import rate (numbers/s), through the upload flow and COPY;
 *   dispatch peak dispatch throughput of one process with every rule on in each of 4 organizations
 *            (a large do-not-call list each, calling hours in 20 recipient zones, frequency caps):
 *            20 campaigns (5 per organization) at 100/s each, started together, calls left
 *            ringing, measured over the first MEASURE_SECONDS: the shape of bench/campaignDispatch.ts
 *            "throughput", so the two figures compare.
 * BENCH_RULES=off runs the same without any rule (empty list, no policy) for comparison;
 * BENCH_PART=import measures the import alone.
 * Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/complianceClaims.ts
 *   default sizes 200,000 listed numbers per organization and 20,000 contacts.
 * BENCH_FULL=1 for the full size (each organization's list 1,000,000 numbers; 100,000 contacts in all).
 */
import { client } from "../test/support/client.ts"
import { startDialerCluster } from "../test/support/dialerCluster.ts"
import { startFakeTwilio } from "../test/support/fakeTwilio.ts"

const BASE = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const FULL = process.env.BENCH_FULL === "1"
/** BENCH_RULES=off: the same dispatch with no list and no policy, to compare under the same load. */
const RULES = process.env.BENCH_RULES !== "off"
const IMPORT_ONLY = process.env.BENCH_PART === "import"
const DNC_NUMBERS = FULL ? 1_000_000 : 200_000
const CONTACTS = FULL ? 100_000 : 20_000
const CAMPAIGNS = 20
const ORGANIZATIONS = 4
/** Dispatch is measured over this window from the start requests (the contacts outlast it). */
const MEASURE_SECONDS = 30
const ZONES = Array.from({ length: 20 }, (_, index) => {
  const offset = index - 9
  return offset === 0 ? "Etc/GMT" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const busiestSecond = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  let best = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1000) j++
    best = Math.max(best, i - j + 1)
  }
  return best
}

const carrier = await startFakeTwilio({ script: () => ({ outcome: "silent" }) })
const cluster = await startDialerCluster(BASE, 1, {
  TALKGRAPH_ORG_MAX_CONCURRENT_CALLS: "100000",
  TALKGRAPH_SCHEDULER_POLL_MS: "500"
})
try {
  const api = client(cluster.nodes[0]!.url)
  const tenants = await Promise.all(Array.from({ length: ORGANIZATIONS }, () => cluster.newTenant(carrier)))
  const upload = async (token: string, csv: string) => {
    const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token })
    const put = await fetch(grant.body.upload_url, {
      method: "PUT",
      headers: { "content-type": "text/csv" },
      body: csv
    })
    if (!put.ok) throw new Error(`upload failed: ${put.status}`)
    return grant.body.s3_key as string
  }

  // Listed numbers: +1 212 2xx xxxx. One contact in a hundred is among them.
  const listed = (index: number) => `+1212${String(2_000_000 + index).padStart(7, "0")}`
  console.log(
    `\n== do-not-call import (${DNC_NUMBERS.toLocaleString("en-US")} numbers, one request per organization, ${
      RULES ? ORGANIZATIONS : 0
    } organizations)`
  )
  const dncCsv = `phone_number,reason\n${
    Array.from({ length: DNC_NUMBERS }, (_, index) => `${listed(index)},bench`).join("\n")
  }\n`
  for (const tenant of RULES ? tenants : tenants.slice(0, 1)) {
    const dncKey = await upload(tenant.token, RULES ? dncCsv : "phone_number\n+12125550199\n")
    const importStarted = performance.now()
    const imported = await api.post("/api/v1/organizations/dnc/import", { source_id: dncKey }, {
      token: tenant.token
    })
    const importSeconds = (performance.now() - importStarted) / 1000
    if (imported.status !== 200) throw new Error(`import failed: ${imported.status} ${JSON.stringify(imported.body)}`)
    console.log(
      `imported ${imported.body.imported} numbers in ${importSeconds.toFixed(2)} s: ${
        Math.round(imported.body.imported / importSeconds).toLocaleString("en-US")
      } numbers/s (${(dncCsv.length / 1e6).toFixed(1)} MB)`
    )
  }

  if (!IMPORT_ONLY) {
    for (const tenant of tenants) {
      // Every rule on: hours open in each zone (00:00–23:59 local, every day) so that what is measured is
      // the rules' cost, not waiting; caps high enough never to hold a fresh number.
      const policy = await api.put("/api/v1/organizations/compliance-policy", {
        calling_hours: { enabled: RULES, start: "00:00", end: "23:59", days: [1, 2, 3, 4, 5, 6, 7], holidays: [] },
        frequency_caps: RULES ? { per_day: 3, per_7_days: 10 } : { per_day: null, per_7_days: null }
      }, { token: tenant.token })
      if (policy.status !== 200) throw new Error(`policy failed: ${policy.status}`)
    }

    const perCampaign = CONTACTS / CAMPAIGNS
    console.log(
      `\n== dispatch ${
        RULES ? "with every rule on" : "with no rule (BENCH_RULES=off)"
      } (${CAMPAIGNS} campaigns of ${ORGANIZATIONS} organizations × ${perCampaign} contacts in ${ZONES.length} zones, 1% listed, 100/s each, first ${MEASURE_SECONDS} s)`
    )
    const campaigns: Array<{ id: number; tenant: (typeof tenants)[number] }> = []
    for (let campaign = 0; campaign < CAMPAIGNS; campaign++) {
      const tenant = tenants[campaign % ORGANIZATIONS]!
      const rows: Array<string> = []
      for (let index = 0; index < perCampaign; index++) {
        const n = campaign * perCampaign + index
        const onList = RULES && n % 100 === 0
        const number = onList ? listed(n) : `+1415${String(2_000_000 + n).padStart(7, "0")}`
        rows.push(`${number},P${n},${ZONES[n % ZONES.length]}`)
      }
      const key = await upload(tenant.token, `phone_number,first_name,timezone\n${rows.join("\n")}\n`)
      const created = await api.post("/api/v1/campaign/create", {
        name: `Compliance bench ${campaign}`,
        workflow_id: tenant.workflowId,
        source_type: "csv",
        source_id: key,
        rate_limit_per_second: 100,
        circuit_breaker: { enabled: false }
      }, { token: tenant.token })
      if (created.status !== 200) throw new Error(`campaign failed: ${created.status} ${JSON.stringify(created.body)}`)
      campaigns.push({ id: created.body.id, tenant })
    }
    await sleep(2000)
    const started = Date.now()
    await Promise.all(campaigns.map(({ id, tenant }) => cluster.startCampaign(tenant, id)))
    await sleep(MEASURE_SECONDS * 1000 - (Date.now() - started))
    const placed = carrier.calls().map((call) => call.createdAt).filter((at) => at - started <= MEASURE_SECONDS * 1000)
      .sort((a, b) => a - b)
    const sustained = (placed.length - 1) / ((placed.at(-1)! - placed[0]!) / 1000)
    const listedCalls = carrier.calls().filter((call) => call.to.startsWith("+1212")).length
    console.log(
      `${placed.length} calls placed in ${MEASURE_SECONDS} s; busiest second ${
        busiestSecond(placed)
      } calls/s; sustained ${sustained.toFixed(0)} calls/s (theoretical ${
        CAMPAIGNS * 100
      }/s); listed numbers dialled: ${listedCalls}`
    )
    const { rows: [skips] } = await cluster.db.query(
      `SELECT count(*) FILTER (WHERE skip_reason = 'dnc')::int AS dnc FROM campaign_contacts c JOIN campaigns k ON k.id = c.campaign_id
       WHERE k.organization_id = ANY($1)`,
      [tenants.map((tenant) => tenant.organizationId)]
    )
    console.log(`contacts skipped as listed: ${skips.dnc}`)
  }
} finally {
  await cluster.close()
  await carrier.close()
}
