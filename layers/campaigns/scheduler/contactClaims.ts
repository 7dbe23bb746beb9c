import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import type { Claim, ClaimedAttempt, ClaimInput } from "../../../services/DialerRepo.ts"
import { assignCallerIds, type CallerIdPool, type PoolNumber, poolRoom } from "../../../src/campaigns/callerIdPool.ts"
import { BREAKER_FAILURES, verdictOf } from "../../../src/campaigns/circuitBreaker.ts"
import type { CallingHours } from "../../../src/compliance/callingHours.ts"
import { type FrequencyCaps, noFrequencyCaps } from "../../../src/compliance/compliancePolicy.ts"
import { closedZoneSets } from "../../../src/compliance/zoneWindows.ts"
import type { CampaignId, OrganizationId, RunId, TelephonyConfigId } from "../../../src/domain/ids.ts"
import { channelOfMode } from "../../../src/usage/channels.ts"
import { retryOnDeadlock } from "./deadlockRetry.ts"

/** Separates one organization's claims from another's, so its live-call count is exact. */
export const ORG_CLAIM_LOCK = 7_310

/** A campaign without `max_concurrency` is bounded by the organization's limit alone. */
const NO_CAMPAIGN_CAP = 2_147_483_647

/** What a claim reads, joined to each attempt it took (none: one row with null attempt columns). */
interface ClaimRow {
  readonly state: string
  readonly lease_owner: string | null
  readonly leased: boolean
  readonly updated_at: Date
  readonly campaign_live: number
  readonly organization_live: number
  readonly breaker_calls: number
  readonly breaker_failures: number
  readonly attempt_id: number | null
  readonly run_id: RunId | null
  readonly contact_id: number | null
  readonly attempt_number: number | null
  readonly phone_number: string | null
}

/** A pool number's calls inside its caps' windows (none counted when it has no caps). */
interface PoolUsageRow {
  readonly address: string
  readonly last_second: number
  readonly last_day: number
  readonly second_oldest: Date | null
  readonly day_oldest: Date | null
}

/** Rolls a claim back: what it read says it must not dial; `claim` says why. */
class Undone extends Data.TaggedError("Undone")<{ readonly claim: Claim }> {}

const at = (now: number) => new Date(now)

const DAY_MS = 86_400_000
/** A cap that is not set: never reached. */
const NO_CAP = 2_147_483_647

export const makeContactClaims = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * The claim itself, in one statement once the organization's lock is held: it reads what the
   * claim depends on (`standing`: the campaign's state and lease, the campaign's and the
   * organization's live calls, the breaker's window), takes up to as many due contacts as the
   * rate and the free call slots allow (`SKIP LOCKED`), marks those on the organization's
   * do-not-call list skipped (one primary-key probe each, so a number listed while the campaign
   * runs is not dialled afterwards, by any process), moves those outside their local calling
   * hours (`closedZones`: their zone set's next opening) to when the hours open, and records an attempt and a run for each:
   * the runs are inserted, the attempts inserted, the contacts marked dialling and the campaign's
   * `executed_count` moved; the usage rollup rows the runs' trigger updates come last, at the end
   * of the statement. That is the order every dialer write takes its locks in (see
   * `applyOutcome`), and the rollup rows, which every call of the organization updates, are held
   * only for the commit that follows. It returns the standing, joined to each claimed attempt.
   */
  const claimStatement = (input: ClaimInput, closedZones: Record<string, string>, caps: FrequencyCaps) => {
    const { campaign, plan, now } = input
    const capped = caps.per_day === null && caps.per_7_days === null
      ? sql`NULL::timestamptz`
      : sql`(
          SELECT GREATEST(
                   CASE WHEN count(*) FILTER (WHERE r.created_at > ${at(now - DAY_MS)}) >= ${
        caps.per_day ?? NO_CAP
      }::int
                        THEN min(r.created_at) FILTER (WHERE r.created_at > ${at(now - DAY_MS)}) + interval '1 day' END,
                   CASE WHEN count(*) >= ${
        caps.per_7_days ?? NO_CAP
      }::int THEN min(r.created_at) + interval '7 days' END)
          FROM runs r
          WHERE r.organization_id = ${campaign.organization_id} AND r.called_number = c.phone_number
            AND r.direction = 'outbound' AND r.created_at > ${at(now - 7 * DAY_MS)})`
    const breaker = campaign.circuit_breaker
    const campaignLive = campaign.max_concurrency === null
      ? sql`0`
      : sql`(SELECT count(*) FROM campaign_attempts WHERE campaign_id = ${campaign.id} AND ended_at IS NULL)`
    // The breaker sees attempts made since its last trip that ended inside its window.
    const breakerWindow = breaker.enabled
      ? sql`
          SELECT count(*) AS calls, count(*) FILTER (WHERE outcome IN ${sql.in(BREAKER_FAILURES)}) AS failures
          FROM campaign_attempts
          WHERE campaign_id = ${campaign.id} AND ended_at > ${at(now - breaker.window_seconds * 1000)}
            AND ended_at <= ${at(now)} AND created_at > ${campaign.breaker_reset_at ?? new Date(0)}`
      : sql`SELECT 0 AS calls, 0 AS failures`
    return sql<ClaimRow>`
      WITH standing AS (
        SELECT c.state, c.lease_owner, c.lease_expires_at > now() AS leased, c.updated_at,
               ${campaignLive}::int AS campaign_live,
               (SELECT count(*) FROM campaign_attempts
                WHERE organization_id = ${campaign.organization_id} AND ended_at IS NULL)::int AS organization_live,
               b.calls::int AS breaker_calls, b.failures::int AS breaker_failures
        FROM campaigns c CROSS JOIN LATERAL (${breakerWindow}) b
        WHERE c.id = ${campaign.id}
      ),
      allowed AS (
        SELECT CASE WHEN state = 'running' AND lease_owner = ${input.owner} AND leased
                    THEN GREATEST(0, LEAST(${input.wanted}::int, ${
      campaign.max_concurrency ?? NO_CAMPAIGN_CAP
    }::int - campaign_live,
                                           ${input.orgLimit}::int - organization_live))
                    ELSE 0 END AS room
        FROM standing
      ),
      candidates AS (
        SELECT c.id, c.row_number, c.phone_number, c.context, c.greeting_override, c.next_attempt_at,
               c.attempt_count + 1 AS attempt_number,
               EXISTS (SELECT 1 FROM do_not_call_numbers d
                       WHERE d.organization_id = ${campaign.organization_id} AND d.phone_number = c.phone_number) AS on_dnc,
               (${JSON.stringify(closedZones)}::jsonb ->> c.time_zones)::timestamptz AS opens_at,
               ${capped} AS capped_until
        FROM campaign_contacts c
        WHERE c.campaign_id = ${campaign.id} AND c.state = 'pending' AND c.next_attempt_at <= ${at(now)}
        ORDER BY c.next_attempt_at, c.id
        LIMIT (SELECT room FROM allowed)
        FOR UPDATE OF c SKIP LOCKED
      ),
      picked AS (
        SELECT * FROM candidates WHERE NOT on_dnc AND opens_at IS NULL AND capped_until IS NULL
      ),
      -- Called as often as the caps allow (by any campaign or single call): due again once the
      -- oldest of those calls leaves the window.
      capped AS (
        UPDATE campaign_contacts c
        SET next_attempt_at = k.capped_until, skip_reason = 'frequency_cap', updated_at = ${at(now)}
        FROM candidates k WHERE c.id = k.id AND NOT k.on_dnc AND k.opens_at IS NULL AND k.capped_until IS NOT NULL
      ),
      -- Outside the recipient's calling hours: waits, due again when they open.
      waiting AS (
        UPDATE campaign_contacts c
        SET next_attempt_at = k.opens_at, skip_reason = 'outside_local_hours', updated_at = ${at(now)}
        FROM candidates k WHERE c.id = k.id AND NOT k.on_dnc AND k.opens_at IS NOT NULL
      ),
      -- Listed since the import (or between retries): never dialled, and no longer waiting.
      skipped AS (
        UPDATE campaign_contacts c SET state = 'skipped', skip_reason = 'dnc', updated_at = ${at(now)}
        FROM candidates k WHERE c.id = k.id AND k.on_dnc
      ),
      new_runs AS (
        INSERT INTO runs (organization_id, workflow_id, definition_id, version_number, name, channel, mode, direction,
                          caller_number, called_number, campaign_id, contact_id, initial_context, created_at, updated_at)
        SELECT ${campaign.organization_id}, ${campaign.workflow_id}, ${plan.definitionId}, ${plan.versionNumber},
               ${`campaign-${campaign.id}-row-`} || p.row_number || '-attempt-' || p.attempt_number,
               ${channelOfMode(plan.provider)}, ${plan.provider}, 'outbound', ${plan.callerNumber}, p.phone_number,
               ${campaign.id}, p.id,
               -- The CSV columns, then what the dialer knows; later keys win, as in a spread.
               p.context
                 || jsonb_build_object('phone_number', p.phone_number)
                 || CASE WHEN p.greeting_override IS NULL OR jsonb_typeof(p.greeting_override) = 'null' THEN '{}'::jsonb
                         ELSE jsonb_build_object('greeting_override', p.greeting_override) END
                 || jsonb_build_object('caller_number', ${plan.callerNumber}::text, 'called_number', p.phone_number,
                                       'campaign_id', ${campaign.id}::bigint, 'attempt_number', p.attempt_number),
               ${at(now)}, ${at(now)}
        FROM picked p
        RETURNING id, contact_id
      ),
      new_attempts AS (
        INSERT INTO campaign_attempts (organization_id, campaign_id, contact_id, attempt_number, run_id, created_at,
                                       deadline_at, telephony_configuration_id, provider, caller_number)
        SELECT ${campaign.organization_id}, ${campaign.id}, p.id, p.attempt_number, r.id, ${at(now)},
               ${at(input.deadlineAt)}, ${plan.telephonyConfigurationId}, ${plan.provider}, ${plan.callerNumber}
        FROM picked p JOIN new_runs r ON r.contact_id = p.id
        RETURNING id, contact_id, run_id, attempt_number
      ),
      dialing AS (
        UPDATE campaign_contacts c
        SET state = 'dialing', skip_reason = NULL, attempt_count = a.attempt_number, last_attempt_at = ${
      at(now)
    }, last_run_id = a.run_id,
            updated_at = ${at(now)}
        FROM new_attempts a
        WHERE c.id = a.contact_id
      ),
      executed AS (
        UPDATE campaigns SET executed_count = executed_count + (SELECT count(*) FROM new_attempts)
        WHERE id = ${campaign.id} AND EXISTS (SELECT 1 FROM new_attempts)
      ),
      claimed AS (
        SELECT a.id AS attempt_id, a.run_id, a.contact_id, a.attempt_number, p.phone_number, p.next_attempt_at
        FROM new_attempts a JOIN picked p ON p.id = a.contact_id
      )
      SELECT s.*, claimed.attempt_id, claimed.run_id, claimed.contact_id, claimed.attempt_number, claimed.phone_number
      FROM standing s LEFT JOIN claimed ON true
      ORDER BY claimed.next_attempt_at, claimed.contact_id`
  }

  /**
   * The pool's usable numbers (active, not refused by the carrier) with the room their caps leave
   * now, counting every call placed from them by the organization, and when the first full one
   * frees. Read under the organization's claim lock, so no other claim of it can use them meanwhile.
   */
  const poolNow = (
    organizationId: OrganizationId,
    configurationId: TelephonyConfigId,
    pool: CallerIdPool,
    now: number
  ) =>
    Effect.gen(function*() {
      const perSecond = pool.max_calls_per_second_per_number
      const perDay = pool.max_calls_per_day_per_number
      const since = perDay !== null ? now - DAY_MS : now - 1000
      const usage = perSecond === null && perDay === null
        ? sql`SELECT 0 AS last_second, 0 AS last_day, NULL::timestamptz AS second_oldest, NULL::timestamptz AS day_oldest`
        : sql`
          SELECT count(*) FILTER (WHERE a.created_at > ${
          at(now - 1000)
        })::int AS last_second, count(*)::int AS last_day,
                 min(a.created_at) FILTER (WHERE a.created_at > ${at(now - 1000)}) AS second_oldest,
                 min(a.created_at) AS day_oldest
          FROM campaign_attempts a
          WHERE a.organization_id = ${organizationId} AND a.caller_number = n.address
            AND a.created_at > ${at(since)} AND a.created_at <= ${at(now)}`
      const rows = yield* sql<PoolUsageRow>`
        SELECT n.address, u.last_second, u.last_day, u.second_oldest, u.day_oldest
        FROM phone_numbers n CROSS JOIN LATERAL (${usage}) u
        WHERE n.organization_id = ${organizationId} AND n.telephony_configuration_id = ${configurationId}
          AND n.is_active AND n.caller_id_refused_at IS NULL AND n.address LIKE '+%'
          ${pool.phone_number_ids === null ? sql`` : sql`AND n.id IN ${sql.in(pool.phone_number_ids)}`}
        ORDER BY n.id`
      let freesAt = Number.POSITIVE_INFINITY
      const numbers = rows.map((row): PoolNumber => {
        const secondFull = perSecond !== null && row.last_second >= perSecond
        const dayFull = perDay !== null && row.last_day >= perDay
        if (secondFull || dayFull) {
          freesAt = Math.min(
            freesAt,
            Math.max(
              secondFull ? row.second_oldest!.getTime() + 1000 : 0,
              dayFull ? row.day_oldest!.getTime() + DAY_MS : 0
            )
          )
          return { address: row.address, room: 0 }
        }
        return {
          address: row.address,
          room: Math.min(
            perSecond === null ? Number.POSITIVE_INFINITY : perSecond - row.last_second,
            perDay === null ? Number.POSITIVE_INFINITY : perDay - row.last_day
          )
        }
      })
      return { numbers, freesAt }
    })

  /** Writes each claimed attempt's caller ID, picked from the pool, on the attempt and its run. */
  const placeFromPool = (
    pool: CallerIdPool,
    numbers: ReadonlyArray<PoolNumber>,
    attempts: ReadonlyArray<ClaimedAttempt>
  ) =>
    Effect.gen(function*() {
      const callers = assignCallerIds(
        pool.strategy,
        numbers,
        attempts.map((attempt) => attempt.phoneNumber),
        attempts[0]!.attemptId
      )
      const picked = attempts.map((attempt, index) => ({ ...attempt, callerNumber: callers[index]! }))
      yield* sql`
        WITH picked AS (
          SELECT * FROM jsonb_to_recordset(${
        JSON.stringify(picked.map((attempt) => ({ id: attempt.attemptId, caller: attempt.callerNumber })))
      }::jsonb) AS p (id bigint, caller text)
        ),
        attempts AS (
          UPDATE campaign_attempts a SET caller_number = p.caller FROM picked p WHERE a.id = p.id
          RETURNING a.run_id, p.caller
        )
        UPDATE runs r
        SET caller_number = t.caller, initial_context = r.initial_context || jsonb_build_object('caller_number', t.caller)
        FROM attempts t WHERE r.id = t.run_id`
      return picked
    })

  const nothingDue = (campaignId: CampaignId) =>
    Effect.map(
      sql<{ next_due: Date | null; dialing: number }>`
        SELECT min(next_attempt_at) FILTER (WHERE state = 'pending') AS next_due,
               count(*) FILTER (WHERE state = 'dialing')::int AS dialing
        FROM campaign_contacts WHERE campaign_id = ${campaignId} AND state IN ('pending', 'dialing')`,
      ([rest]): Claim => ({ _tag: "NoneDue", nextDueAt: rest?.next_due ?? null, dialing: rest?.dialing ?? 0 })
    )

  /** What a claim that took nothing means. */
  const untaken = (input: ClaimInput, current: ClaimRow) => {
    const campaign = input.campaign
    if (campaign.max_concurrency !== null && current.campaign_live >= campaign.max_concurrency) {
      return Effect.succeed<Claim>({ _tag: "Full", limit: "campaign" })
    }
    if (current.organization_live >= input.orgLimit) {
      return Effect.succeed<Claim>({ _tag: "Full", limit: "organization" })
    }
    return nothingDue(campaign.id)
  }

  /**
   * Claims up to `wanted` due contacts and records their attempts and runs in one transaction,
   * BEFORE the carrier is called: a crash after this point leaves attempts to reconcile, never a
   * contact to dial twice. The organization's claims (from any process) queue on its lock, and
   * live calls are counted after it is taken, so two actors can never both take its last slot;
   * the batch is cut to the free slots of the campaign and of the organization. A campaign whose
   * settings changed meanwhile, or whose breaker must trip, keeps nothing of what was claimed.
   */
  const claim = (input: ClaimInput) =>
    retryOnDeadlock(sql.withTransaction(Effect.gen(function*() {
      const { campaign } = input
      yield* sql`SELECT pg_advisory_xact_lock(${ORG_CLAIM_LOCK}, ${campaign.organization_id}::int)`
      // Read at every claim, so a policy changed while the campaign runs holds from its next claim.
      const [rules] = yield* sql<
        {
          calling_hours: CallingHours | null
          contact_zones: ReadonlyArray<string>
          frequency_caps: FrequencyCaps | null
        }
      >`
        SELECT COALESCE(c.calling_hours, p.calling_hours) AS calling_hours, c.contact_zones, p.frequency_caps
        FROM campaigns c LEFT JOIN organization_compliance_policies p ON p.organization_id = c.organization_id
        WHERE c.id = ${campaign.id}`
      const { plan } = input
      const pool = plan.callerIdPool === null
        ? null
        : yield* poolNow(campaign.organization_id, plan.telephonyConfigurationId, plan.callerIdPool, input.now)
      if (pool !== null && pool.numbers.length === 0) return { _tag: "NoCallerIds" } as Claim
      const room = pool === null ? Number.POSITIVE_INFINITY : poolRoom(pool.numbers)
      if (pool !== null && room === 0) return { _tag: "CallerIdsBusy", until: pool.freesAt } as Claim
      const rows = yield* claimStatement(
        { ...input, wanted: Math.min(input.wanted, room) },
        closedZoneSets(rules?.calling_hours, rules?.contact_zones ?? [], input.now),
        rules?.frequency_caps ?? noFrequencyCaps
      )
      const current = rows[0]
      if (!current || current.state !== "running" || current.lease_owner !== input.owner || !current.leased) {
        return { _tag: "Lost" } as Claim
      }
      if (current.updated_at.getTime() !== campaign.updated_at.getTime()) {
        return yield* new Undone({ claim: { _tag: "Changed" } })
      }
      const verdict = verdictOf(current.breaker_calls, current.breaker_failures, campaign.circuit_breaker)
      if (verdict.tripped) return yield* new Undone({ claim: { _tag: "Tripped", verdict } })
      const attempts = rows.flatMap((row): Array<ClaimedAttempt> =>
        row.attempt_id === null
          ? []
          : [{
            attemptId: row.attempt_id,
            runId: row.run_id!,
            contactId: row.contact_id!,
            attemptNumber: row.attempt_number!,
            phoneNumber: row.phone_number!,
            callerNumber: plan.callerNumber
          }]
      )
      if (attempts.length === 0) return yield* untaken(input, current)
      if (pool !== null) {
        return { _tag: "Claimed", attempts: yield* placeFromPool(plan.callerIdPool!, pool.numbers, attempts) } as Claim
      }
      return { _tag: "Claimed", attempts } as Claim
    }))).pipe(Effect.catchTag("Undone", (undone) => Effect.succeed(undone.claim)))

  return { claim }
})
