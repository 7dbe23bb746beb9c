import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import type { OrganizationId } from "../../src/domain/ids.ts"
import {
  messageId,
  nodeDeliveryId,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEventType,
  type WebhookNodeDelivery
} from "../../src/webhooks/webhookRecord.ts"

const ENDPOINT_COLUMNS =
  "id, url, description, event_types, enabled, disabled_reason, disabled_at, failing_since, created_at, updated_at"

export interface DeliveryRow {
  readonly id: number
  readonly event_id: number
  readonly event_type: WebhookEventType
  readonly state: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly next_attempt_at: Date
  readonly delivered_at: Date | null
  readonly last_status: number | null
  readonly last_error: string | null
  readonly created_at: Date
  readonly payload: Record<string, unknown> | null
  readonly attempt_log: ReadonlyArray<{
    readonly attempted_at: string
    readonly status: number | null
    readonly latency_ms: number
    readonly error: string | null
  }>
}

export const deliveryView = (row: DeliveryRow): WebhookDelivery => ({
  id: Number(row.id),
  message_id: messageId(Number(row.event_id)),
  event_type: row.event_type,
  state: row.state,
  attempts: row.attempts,
  next_attempt_at: row.state === "pending" ? row.next_attempt_at : null,
  delivered_at: row.delivered_at,
  last_status: row.last_status,
  last_error: row.last_error,
  created_at: row.created_at,
  payload: row.payload,
  attempt_log: row.attempt_log.map((attempt) => ({ ...attempt, attempted_at: new Date(attempt.attempted_at) }))
})

export const nodeDeliveryView = (row: NodeDeliveryRow): WebhookNodeDelivery => ({
  id: Number(row.id),
  delivery_id: nodeDeliveryId(Number(row.id)),
  workflow_run_id: row.run_id === null ? null : Number(row.run_id),
  node_id: row.node_id,
  node_name: typeof row.node_request["name"] === "string" ? row.node_request["name"] : null,
  endpoint_url: String(row.node_request["endpoint_url"] ?? ""),
  http_method: String(row.node_request["http_method"] ?? "POST"),
  state: row.state,
  attempts: row.attempts,
  next_attempt_at: row.state === "pending" ? row.next_attempt_at : null,
  delivered_at: row.delivered_at,
  last_status: row.last_status,
  last_error: row.last_error,
  created_at: row.created_at,
  payload: row.body,
  attempt_log: row.attempt_log.map((attempt) => ({ ...attempt, attempted_at: new Date(attempt.attempted_at) }))
})

/** A delivery the worker claimed: what sending it needs. */
export interface ClaimedDelivery {
  readonly id: number
  readonly organization_id: OrganizationId
  readonly endpoint_id: number
  readonly event_id: number
  readonly event_type: WebhookEventType
  readonly url: string
  readonly secret: string
  /** Signs too until it expires: the secret before the last rotation. */
  readonly previous_secret: string | null
  readonly previous_secret_expires_at: Date | null
  readonly attempts: number
  readonly retry_until: Date
  readonly failing_since: Date | null
  readonly payload: Record<string, unknown> | null
  readonly run_id: number | null
  readonly campaign_id: number | null
  readonly occurred_at: Date
}

/** A claimed delivery to a workflow's webhook node: the node's request as it was when the run finished. */
export interface ClaimedNodeDelivery {
  readonly id: number
  readonly organization_id: OrganizationId
  readonly endpoint_id: null
  readonly event_id: number
  readonly attempts: number
  readonly retry_until: Date
  readonly run_id: number
  readonly workflow_id: number
  readonly node_id: string
  readonly node_request: Record<string, unknown>
  /** The rendered body once the first attempt fixed it. */
  readonly body: unknown
}

type ClaimedRow = (ClaimedDelivery & { readonly node_id: null }) | ClaimedNodeDelivery

export interface NodeDeliveryRow {
  readonly id: number
  readonly event_id: number
  readonly run_id: number | null
  readonly node_id: string
  readonly node_request: Record<string, unknown>
  readonly state: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly next_attempt_at: Date
  readonly delivered_at: Date | null
  readonly last_status: number | null
  readonly last_error: string | null
  readonly created_at: Date
  readonly body: unknown
  readonly attempt_log: DeliveryRow["attempt_log"]
}

const at = (now: number) => new Date(now)

/** After a rotation, messages are signed with the previous secret too for this long (receivers switch over). */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000

export const makeWebhookRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.unsafe(ENDPOINT_COLUMNS)

  const endpoints = (organizationId: OrganizationId) =>
    sql<WebhookEndpoint>`SELECT ${columns} FROM webhook_endpoints WHERE organization_id = ${organizationId} ORDER BY id`

  const endpoint = (organizationId: OrganizationId, id: number) =>
    Effect.map(
      sql<
        WebhookEndpoint
      >`SELECT ${columns} FROM webhook_endpoints WHERE organization_id = ${organizationId} AND id = ${id}`,
      (rows) => rows[0]
    )

  const insertEndpoint = (input: {
    readonly organizationId: OrganizationId
    readonly url: string
    readonly description: string | null
    readonly eventTypes: ReadonlyArray<WebhookEventType>
    readonly sealedSecret: string
    readonly now: Date
  }) =>
    Effect.map(
      sql<WebhookEndpoint>`
        INSERT INTO webhook_endpoints (organization_id, url, description, event_types, secret, created_at, updated_at)
        VALUES (${input.organizationId}, ${input.url}, ${input.description}, ${JSON.stringify(input.eventTypes)}::jsonb,
                ${input.sealedSecret}, ${input.now}, ${input.now})
        RETURNING ${columns}`,
      (rows) => rows[0]!
    )

  const updateEndpoint = (organizationId: OrganizationId, id: number, input: {
    readonly url: string
    readonly description: string | null
    readonly eventTypes: ReadonlyArray<WebhookEventType>
    readonly enabled: boolean
    readonly reenabled: boolean
    readonly now: Date
  }) =>
    Effect.map(
      sql<WebhookEndpoint>`
        UPDATE webhook_endpoints
        SET url = ${input.url}, description = ${input.description}, event_types = ${
        JSON.stringify(input.eventTypes)
      }::jsonb,
            enabled = ${input.enabled}, updated_at = ${input.now},
            disabled_reason = CASE WHEN ${input.enabled} THEN NULL ELSE COALESCE(disabled_reason, 'Disabled by a user') END,
            disabled_at = CASE WHEN ${input.enabled} THEN NULL ELSE COALESCE(disabled_at, ${input.now}) END,
            failing_since = CASE WHEN ${input.reenabled} THEN NULL ELSE failing_since END
        WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING ${columns}`,
      (rows) => rows[0]
    )

  const deleteEndpoint = (organizationId: OrganizationId, id: number) =>
    sql`DELETE FROM webhook_endpoints WHERE organization_id = ${organizationId} AND id = ${id}`

  const replaceSecret = (organizationId: OrganizationId, id: number, sealedSecret: string, now: Date) =>
    Effect.map(
      sql<WebhookEndpoint>`
        UPDATE webhook_endpoints
        SET previous_secret = secret, previous_secret_expires_at = ${new Date(now.getTime() + PREVIOUS_SECRET_MS)},
            secret = ${sealedSecret}, updated_at = ${now}
        WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING ${columns}`,
      (rows) => rows[0]
    )

  const attemptLog = sql`
    COALESCE((SELECT jsonb_agg(jsonb_build_object('attempted_at', a.attempted_at, 'status', a.status,
                                                 'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.id)
              FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id), '[]'::jsonb) AS attempt_log`

  const deliverySelect = sql`
    SELECT d.id, d.event_id, e.type AS event_type, d.state, d.attempts, d.next_attempt_at, d.delivered_at, d.last_status,
           d.last_error, d.created_at, e.payload, ${attemptLog}
    FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`

  /** A page of one target's deliveries (an endpoint's, or an agent's webhook nodes'), newest first. */
  const pageOf = <Row extends object>(
    select: Statement.Fragment,
    target: Statement.Fragment,
    limit: number,
    offset: number
  ) =>
    Effect.all({
      items: sql<Row>`${select} WHERE ${target} ORDER BY d.id DESC LIMIT ${limit} OFFSET ${offset}`,
      total: Effect.map(
        sql<{ total: number }>`SELECT count(*)::int AS total FROM webhook_deliveries d WHERE ${target}`,
        (rows) => rows[0]?.total ?? 0
      )
    })

  /** One of a target's deliveries back to pending from now, with a fresh retry window (what it sends stays). */
  const requeueOf = <Row extends object>(
    select: Statement.Fragment,
    target: Statement.Fragment,
    deliveryId: number,
    now: number
  ) =>
    Effect.gen(function*() {
      const updated = yield* sql`
        UPDATE webhook_deliveries d
        SET state = 'pending', next_attempt_at = ${at(now)}, retry_until = ${at(now + 24 * 60 * 60 * 1000)}
        WHERE d.id = ${deliveryId} AND ${target}
        RETURNING d.id`
      if (updated.length === 0) return undefined
      const [row] = yield* sql<Row>`${select} WHERE d.id = ${deliveryId}`
      return row
    })

  const deliveries = (endpointId: number, limit: number, offset: number) =>
    pageOf<DeliveryRow>(deliverySelect, sql`d.endpoint_id = ${endpointId}`, limit, offset)

  /** The endpoint's own retries are not touched. */
  const requeue = (endpointId: number, deliveryId: number, now: number) =>
    requeueOf<DeliveryRow>(deliverySelect, sql`d.endpoint_id = ${endpointId}`, deliveryId, now)

  /**
   * Due deliveries of enabled endpoints and of webhook nodes, taken for this worker: `SKIP
   * LOCKED` lets any number of processes claim at once without two taking one, and moving
   * `next_attempt_at` past the lease keeps the others away while it is being sent; a worker that
   * dies mid-send leaves it to be claimed again when the lease ends (at least once).
   */
  const claim = (now: number, leaseMs: number, limit: number) =>
    sql<ClaimedRow>`
      WITH due AS (
        SELECT d.id FROM webhook_deliveries d LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
        WHERE d.state = 'pending' AND d.next_attempt_at <= ${at(now)} AND (d.node_id IS NOT NULL OR w.enabled)
        ORDER BY d.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE OF d SKIP LOCKED
      ),
      taken AS (
        UPDATE webhook_deliveries d SET next_attempt_at = ${at(now + leaseMs)}, attempts = d.attempts + 1
        FROM due WHERE d.id = due.id
        RETURNING d.id, d.organization_id, d.endpoint_id, d.event_id, d.attempts, d.retry_until, d.workflow_id,
                  d.node_id, d.node_request, d.body
      )
      SELECT t.id, t.organization_id, t.endpoint_id, t.event_id, e.type AS event_type, w.url, w.secret,
             w.previous_secret, w.previous_secret_expires_at, t.attempts,
             t.retry_until, w.failing_since, e.payload, e.run_id, e.campaign_id, e.occurred_at,
             t.workflow_id, t.node_id, t.node_request, t.body
      FROM taken t LEFT JOIN webhook_endpoints w ON w.id = t.endpoint_id JOIN webhook_events e ON e.id = t.event_id`
      .pipe(
        Effect.map((rows) => {
          const endpoints: Array<ClaimedDelivery> = []
          const nodes: Array<ClaimedNodeDelivery> = []
          for (const row of rows) {
            if (row.node_id === null) endpoints.push(row as ClaimedDelivery)
            else nodes.push(row as ClaimedNodeDelivery)
          }
          return { endpoints, nodes }
        })
      )

  /** The nodes' rendered bodies, fixed the first time they are sent (another process may have fixed one first). */
  const fixNodeBodies = (bodies: ReadonlyMap<number, unknown>) =>
    Effect.map(
      sql<{ id: number; body: unknown }>`
        UPDATE webhook_deliveries d SET body = COALESCE(d.body, v.body)
        FROM jsonb_to_recordset(${
        JSON.stringify(Array.from(bodies, ([id, body]) => ({ id, body })))
      }::jsonb) AS v(id bigint, body jsonb)
        WHERE d.id = v.id
        RETURNING d.id, d.body`,
      (rows) => new Map(rows.map((row) => [Number(row.id), row.body]))
    )

  const nodeDeliverySelect = sql`
    SELECT d.id, d.event_id, e.run_id, d.node_id, d.node_request, d.state, d.attempts, d.next_attempt_at,
           d.delivered_at, d.last_status, d.last_error, d.created_at, d.body, ${attemptLog}
    FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`

  const nodeDeliveries = (workflowId: number, limit: number, offset: number) =>
    pageOf<NodeDeliveryRow>(nodeDeliverySelect, sql`d.workflow_id = ${workflowId}`, limit, offset)

  const requeueNode = (workflowId: number, deliveryId: number, now: number) =>
    requeueOf<NodeDeliveryRow>(nodeDeliverySelect, sql`d.workflow_id = ${workflowId}`, deliveryId, now)

  /**
   * The events' bodies, fixed the first time they are sent so every delivery and retry sends the
   * same bytes; answers each event's body as stored (another process may have fixed it first).
   */
  const fixPayloads = (bodies: ReadonlyMap<number, Record<string, unknown>>) =>
    Effect.map(
      sql<{ id: number; payload: Record<string, unknown> }>`
        UPDATE webhook_events e SET payload = COALESCE(e.payload, v.payload)
        FROM jsonb_to_recordset(${
        JSON.stringify(Array.from(bodies, ([event_id, payload]) => ({ event_id, payload })))
      }::jsonb) AS v(event_id bigint, payload jsonb)
        WHERE e.id = v.event_id
        RETURNING e.id, e.payload`,
      (rows) => new Map(rows.map((row) => [Number(row.id), row.payload]))
    )

  /** Every attempt of a batch in the delivery log, in one statement. */
  const logAttempts = (
    attempts: ReadonlyArray<{
      readonly delivery_id: number
      readonly attempted_at: number
      readonly status: number | null
      readonly latency_ms: number
      readonly error: string | null
    }>
  ) =>
    sql`
      INSERT INTO webhook_delivery_attempts (delivery_id, attempted_at, status, latency_ms, error)
      SELECT v.delivery_id, to_timestamp(v.attempted_at / 1000.0), v.status, v.latency_ms, v.error
      FROM jsonb_to_recordset(${JSON.stringify(attempts)}::jsonb)
        AS v(delivery_id bigint, attempted_at double precision, status integer, latency_ms integer, error text)`

  /** Deliveries a receiver accepted, in one statement; their endpoints are no longer failing. */
  const delivered = (accepted: ReadonlyArray<{ readonly id: number; readonly status: number }>, now: number) =>
    sql`
      WITH done AS (
        UPDATE webhook_deliveries d
        SET state = 'delivered', delivered_at = ${at(now)}, last_status = v.status, last_error = NULL
        FROM jsonb_to_recordset(${JSON.stringify(accepted)}::jsonb) AS v(id bigint, status integer)
        WHERE d.id = v.id
        RETURNING d.endpoint_id
      )
      UPDATE webhook_endpoints SET failing_since = NULL
      WHERE id IN (SELECT endpoint_id FROM done) AND failing_since IS NOT NULL`

  /** A failed attempt: retried at `retryAt`, or failed for good (null). The endpoint is failing from its first failure. */
  const failedAttempt = (
    delivery: { readonly id: number; readonly endpoint_id: number | null },
    now: number,
    status: number | null,
    error: string,
    retryAt: number | null
  ) =>
    sql.withTransaction(Effect.all([
      retryAt === null
        ? sql`UPDATE webhook_deliveries SET state = 'failed', last_status = ${status}, last_error = ${error} WHERE id = ${delivery.id}`
        : sql`UPDATE webhook_deliveries SET next_attempt_at = ${
          at(retryAt)
        }, last_status = ${status}, last_error = ${error}
              WHERE id = ${delivery.id}`,
      sql`UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ${
        at(now)
      }) WHERE id = ${delivery.endpoint_id}`
    ], { discard: true }))

  /**
   * Records a batch's attempts and what they did to their deliveries at once: a reader never sees
   * an attempt in a delivery's log while the delivery still shows its state from before it.
   */
  const recordBatch = <A, E, R>(recording: Effect.Effect<A, E, R>) => sql.withTransaction(recording)

  /** Disables an endpoint that failed every delivery for a day; its pending deliveries wait for it to be re-enabled. */
  const disable = (endpointId: number, now: number, reason: string) =>
    sql`UPDATE webhook_endpoints SET enabled = false, disabled_at = ${
      at(now)
    }, disabled_reason = ${reason}, updated_at = ${at(now)}
        WHERE id = ${endpointId} AND enabled`

  /** Claimed deliveries this process stopped sending (shutdown): due again at once, not when their lease ends. */
  const release = (deliveryIds: ReadonlyArray<number>, now: number) =>
    sql`UPDATE webhook_deliveries SET next_attempt_at = ${at(now)} WHERE id IN ${
      sql.in(deliveryIds)
    } AND state = 'pending'`

  return {
    release,
    endpoints,
    endpoint,
    insertEndpoint,
    updateEndpoint,
    deleteEndpoint,
    replaceSecret,
    deliveries,
    requeue,
    claim,
    fixPayloads,
    fixNodeBodies,
    nodeDeliveries,
    requeueNode,
    logAttempts,
    delivered,
    failedAttempt,
    recordBatch,
    disable
  }
})

export type WebhookRows = Effect.Effect.Success<typeof makeWebhookRows>
