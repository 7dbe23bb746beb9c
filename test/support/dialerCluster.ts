import * as crypto from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { client } from "./client.ts"
import { contactsCsv } from "./dialerFixtures.ts"
import { startLoadBalancer } from "./loadBalancer.ts"
import { freePort, spawnTalkgraph, stop, type TalkgraphProcess, waitUntilServing } from "./process.ts"
import { ensureVoiceModels } from "./voiceFixtures.ts"
import { definitionUsing } from "./workflowRows.ts"

/**
 * Several real `talkgraph serve` processes sharing a fresh PostgreSQL database of their own (so
 * no other test's server takes part), for multi-process dialer tests and benchmarks.
 */
interface ClusterNode {
  readonly proc: TalkgraphProcess
  readonly url: string
  readonly pid: number
}

/**
 * How long a process gets to stop after SIGTERM before it is killed. A process that still has
 * carrier callbacks in flight when told to stop may not finish stopping on its own (their
 * responses are never written once shutdown has begun), which must not hang a whole run.
 */
const STOP_GRACE_MS = 15_000

const stopWithin = async (node: ClusterNode) => {
  if (node.proc.child.exitCode !== null || node.proc.child.signalCode !== null) return
  const kill = setTimeout(() => {
    console.error(`talkgraph (pid ${node.pid}) did not stop within ${STOP_GRACE_MS} ms of SIGTERM; killing it`)
    node.proc.child.kill("SIGKILL")
  }, STOP_GRACE_MS)
  await stop(node.proc)
  clearTimeout(kill)
}

const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

export interface DialerClusterOptions {
  /**
   * A single process the carrier calls back directly (its own URL is the public one), without the
   * balancer in between: what a one-process deployment sees, and no proxy's work in the caller's CPU.
   */
  readonly direct?: boolean
}

export const startDialerCluster = async (
  baseUrl: string,
  size: number,
  env: Record<string, string> = {},
  options: DialerClusterOptions = {}
) => {
  if (options.direct && size !== 1) throw new Error("a direct cluster is one process")
  const name = `talkgraph_cluster_${crypto.randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: baseUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const databaseUrl = withDatabase(baseUrl, name)
  // One storage directory for every process: an upload PUT through the balancer may reach any of them.
  const storage = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-cluster-storage-"))
  const dirs: Array<string> = [storage]
  // Carriers call back through the balancer, so a callback for a dead process's call reaches a live one.
  const balancer = await startLoadBalancer()
  const directPort = options.direct ? await freePort() : null
  const common = {
    DATABASE_URL: databaseUrl,
    PUBLIC_URL: directPort === null ? balancer.url : `http://127.0.0.1:${directPort}`,
    TALKGRAPH_SECRET_KEY: "cluster-secret-key-cluster-secret-key-0123",
    TALKGRAPH_SIGNUP: "true",
    STORAGE_URL: `file://${storage}`,
    TALKGRAPH_LOCAL_STORAGE_SHARED: "true",
    TALKGRAPH_ADMIN_EMAIL: "admin@cluster.test",
    TALKGRAPH_ADMIN_PASSWORD: "admin-password-123",
    LOG_LEVEL: "error",
    ...env
  }
  let spawned = 0
  const spawnNode = async (): Promise<ClusterNode> => {
    if (directPort !== null && spawned > 0) throw new Error("a direct cluster is one process")
    spawned++
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-cluster-"))
    dirs.push(dir)
    const port = directPort ?? await freePort()
    const url = `http://127.0.0.1:${port}`
    const proc = spawnTalkgraph(["serve"], { ...common, PORT: String(port), TALKGRAPH_DATA_DIR: dir })
    await waitUntilServing(proc, url, 120_000)
    balancer.add(url)
    return { proc, url, pid: proc.child.pid! }
  }
  // The first process migrates; the others then start on a ready schema.
  const nodes: Array<ClusterNode> = [await spawnNode()]
  nodes.push(...(await Promise.all(Array.from({ length: size - 1 }, spawnNode))))
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()

  /** A fresh organization with a workflow and a Twilio configuration pointing at `carrier`. */
  const newTenant = async (carrier: { url: string; accountSid: string; authToken: string }) => {
    const api = client(nodes[0]!.url)
    const email = `tenant-${crypto.randomUUID().slice(0, 8)}@cluster.test`
    const signup = await api.post("/api/v1/auth/signup", {
      email,
      password: "correct horse battery staple",
      name: "tenant"
    })
    if (signup.status !== 200) throw new Error(`signup failed: ${signup.status} ${JSON.stringify(signup.body)}`)
    const token = signup.body.token as string
    const organizationId = signup.body.user.organization_id as number
    const workflow = await db.query(
      `INSERT INTO workflows (organization_id, workflow_uuid, name, status) VALUES ($1, $2, 'Cluster agent', 'active') RETURNING id`,
      [organizationId, crypto.randomUUID()]
    )
    const workflowId = Number(workflow.rows[0].id)
    await db.query(
      `INSERT INTO workflow_definitions (workflow_id, version_number, version_status, workflow_definition, published_at)
       VALUES ($1, 1, 'published', $2::jsonb, now())`,
      [workflowId, JSON.stringify(definitionUsing(["first_name"]))]
    )
    const config = await api.post("/api/v1/organizations/telephony-configs", {
      name: "Loopback",
      is_default_outbound: true,
      config: {
        provider: "twilio",
        account_sid: carrier.accountSid,
        auth_token: carrier.authToken,
        api_base_url: carrier.url
      }
    }, { token })
    if (config.status !== 200) throw new Error(`telephony failed: ${config.status} ${JSON.stringify(config.body)}`)
    await ensureVoiceModels(api, { token })
    await api.post(`/api/v1/organizations/telephony-configs/${config.body.id}/phone-numbers`, {
      address: `+1415555${String(Math.floor(Math.random() * 9000) + 1000)}`,
      is_default_caller_id: true
    }, { token })
    return { token, organizationId, workflowId }
  }

  /** A campaign of `numbers` for the tenant (created, and started unless told otherwise). */
  const newCampaign = async (
    tenant: { token: string; workflowId: number },
    numbers: ReadonlyArray<string>,
    settings: Record<string, unknown>,
    start = true
  ) => {
    const api = client(nodes[0]!.url)
    const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: tenant.token })
    const put = await fetch(grant.body.upload_url, {
      method: "PUT",
      headers: { "content-type": "text/csv" },
      body: contactsCsv(numbers)
    })
    if (!put.ok) throw new Error(`upload failed: ${put.status}`)
    const created = await api.post("/api/v1/campaign/create", {
      name: "Cluster campaign",
      workflow_id: tenant.workflowId,
      source_type: "csv",
      source_id: grant.body.s3_key,
      ...settings
    }, { token: tenant.token })
    if (created.status !== 200) throw new Error(`campaign failed: ${created.status} ${JSON.stringify(created.body)}`)
    if (start) await startCampaign(tenant, created.body.id)
    return created.body.id as number
  }

  /** Starts a campaign created with `start` false. */
  const startCampaign = async (tenant: { token: string }, id: number) => {
    const started = await client(nodes[0]!.url).post(`/api/v1/campaign/${id}/start`, undefined, { token: tenant.token })
    if (started.status !== 200) {
      throw new Error(`campaign start failed: ${started.status} ${JSON.stringify(started.body)}`)
    }
  }

  const close = async () => {
    await Promise.all(nodes.map(stopWithin))
    await db.end()
    await balancer.close()
    const cleanup = new pg.Client({ connectionString: baseUrl })
    await cleanup.connect()
    await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await cleanup.end()
    await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
  }

  return { nodes, db, databaseUrl, balancer, newTenant, newCampaign, startCampaign, spawnNode, close }
}

export type DialerCluster = Awaited<ReturnType<typeof startDialerCluster>>
