/**
 * Exact dispatch pacing for one campaign: at most `perSecond` calls in ANY one-second window, and
 * that many on average, not fewer.
 *
 * Two rules together:
 * - a sliding log of the last `perSecond` calls: no second holds more than `perSecond` of them.
 *   This is the hard limit, and it must hold where it is measured, at the carrier, however
 *   unevenly requests travel (a busy process starts some late, a busy network or carrier delays
 *   some more than others). So a call is logged when the carrier has answered its request (or the
 *   request ended otherwise): the carrier saw it no later than that, and the next call of its
 *   slot, started a second after, reaches the carrier more than a second after it. Calls handed
 *   out and not answered yet (`pending`) count as sending now.
 * - a token bucket filling at `perSecond` per second: calls go out spread over the second
 *   instead of in one burst at its start (a carrier may refuse bursts), while a dialer that
 *   fell behind (a slow claim) may catch up with what accrued meanwhile, so the rate is not
 *   under-run. The bucket holds a quarter second of calls, or twice what accrues during a claim
 *   when claims are slower (a busy database): one claim must be able to carry all the calls
 *   due while it runs, or the rate could never be reached.
 * The dialer claims its contacts in batches of whatever both rules allow, so one database round
 * trip serves several calls at high rates, and starts each claim as long before its batch is
 * due as claims lately took (`leadMs`).
 */
export interface DispatchPacer {
  readonly perSecond: number
  readonly windowMs: number
  /** How long claims took lately (the longest, slowly forgotten). */
  readonly leadMs: number
  /** Tokens in the bucket at `refilledAt`. */
  readonly tokens: number
  readonly refilledAt: number
  /** When the carrier had seen each recent call (epoch ms), oldest first, at most `perSecond` of them. */
  readonly recent: ReadonlyArray<number>
  /** Calls handed out whose requests the carrier has not answered yet. */
  readonly pending: number
}

export const WINDOW_MS = 1000

/**
 * A previous owner's calls are known by their claim times; each reached the carrier within this
 * much after (a claim is handed out within its lead, at most a second, plus the request).
 */
const HANDOVER_MS = 1000

/** What the bucket holds at least: a quarter second of calls. */
const BURST_SECONDS = 0.25

/** Longer claims than this are a stall, not a trend to plan for. */
const MAX_LEAD_MS = 1000

/**
 * A batch waits until this many seconds of calls are due (at most the bucket), so at high rates
 * one claim serves a few calls instead of each call paying for its own transaction.
 */
const BATCH_SECONDS = 0.02

/** Calls handed out but not answered fill the whole log only at 1/s; look again this soon. */
const PENDING_RECHECK_MS = 10

/** Tokens are fractional; rounding errors must not cost a millisecond per batch. */
const EPSILON = 1e-6

/** What the bucket holds: at least a quarter second of calls, at most one second's. */
export const capacityFor = (perSecond: number, leadMs = 0) =>
  Math.min(perSecond, Math.max(1, Math.ceil(perSecond * Math.max(BURST_SECONDS, (2 * leadMs) / 1000))))

const capacity = (pacer: DispatchPacer) => capacityFor(pacer.perSecond, pacer.leadMs)

/** The smallest batch worth a claim at this rate. */
export const batchTarget = (pacer: DispatchPacer) =>
  Math.min(capacity(pacer), Math.max(1, Math.round(pacer.perSecond * BATCH_SECONDS)))

/**
 * A pacer with a full bucket and the claim times of the latest calls found in the database after
 * a restart or takeover, so the previous owner's last second counts.
 */
export const pacerFrom = (perSecond: number, claimedAt: ReadonlyArray<number>, now: number): DispatchPacer => ({
  perSecond,
  windowMs: WINDOW_MS,
  leadMs: 0,
  tokens: capacityFor(perSecond),
  refilledAt: now,
  recent: claimedAt.map((time) => time + HANDOVER_MS).sort((a, b) => a - b).slice(-perSecond),
  pending: 0
})

const tokensAt = (pacer: DispatchPacer, now: number) =>
  Math.min(capacity(pacer), pacer.tokens + (Math.max(0, now - pacer.refilledAt) * pacer.perSecond) / 1000)

/** Calls the log allows at `now`: the rate, less those seen in the window ending now and those on their way. */
const logRoom = (pacer: DispatchPacer, now: number) =>
  pacer.perSecond - pacer.pending - pacer.recent.filter((time) => time > now - pacer.windowMs).length

/** How many calls may be handed out at `now`. */
export const available = (pacer: DispatchPacer, now: number) =>
  Math.max(0, Math.min(Math.floor(tokensAt(pacer, now) + EPSILON), logRoom(pacer, now)))

/**
 * The earliest time, not before `now`, at which the bucket holds `count` tokens (at most its
 * capacity) and the log has room for at least one call. Only the bucket is waited on for a full
 * batch: the log's room opens as the calls it holds age out, in the batches they went in, and a
 * last single slot in a second must not be left unused.
 * Sending later than allowed is always safe: waiting only frees tokens and log room.
 */
export const readyAt = (pacer: DispatchPacer, now: number, count: number) => {
  const missing = Math.min(count, capacity(pacer)) - tokensAt(pacer, now)
  const byTokens = missing <= EPSILON ? now : now + Math.ceil((missing * 1000) / pacer.perSecond - EPSILON)
  // One more fits once at most `perSecond - pending - 1` logged calls are inside the window.
  const blocking = pacer.recent.length - (pacer.perSecond - pacer.pending - 1)
  const byLog = blocking <= 0
    ? now
    : blocking > pacer.recent.length
    ? now + PENDING_RECHECK_MS
    : pacer.recent[blocking - 1]! + pacer.windowMs
  return Math.max(now, byTokens, byLog)
}

/** The pacer after `count` calls (no more than `available` allowed) were handed out at `now`. */
export const handedOut = (pacer: DispatchPacer, now: number, count: number): DispatchPacer => ({
  ...pacer,
  tokens: Math.max(0, tokensAt(pacer, now) - count),
  refilledAt: Math.max(now, pacer.refilledAt),
  pending: pacer.pending + count
})

/** The pacer after the carrier answered a handed-out call's request (or the request ended) at `at`. */
export const sent = (pacer: DispatchPacer, at: number): DispatchPacer => {
  const recent = [...pacer.recent]
  let index = recent.length
  while (index > 0 && recent[index - 1]! > at) index--
  recent.splice(index, 0, at)
  return { ...pacer, recent: recent.slice(-pacer.perSecond), pending: Math.max(0, pacer.pending - 1) }
}

/**
 * The next batch: claim `size` contacts at `claimAt`. A claim takes time (a database
 * transaction), and calls sent that much after their slot opened would stretch every second by
 * it; so the claim starts `leadMs` before the slot opens, and takes what will be allowed by the
 * time it is expected to finish. Its calls are then handed out as soon as `available` allows:
 * at once if the claim took as long as expected, a little later if it was quicker.
 */
export interface BatchPlan {
  readonly claimAt: number
  readonly size: number
}

export const nextBatch = (pacer: DispatchPacer, now: number): BatchPlan => {
  const ready = readyAt(pacer, now, batchTarget(pacer))
  const claimAt = Math.max(now, ready - pacer.leadMs)
  return { claimAt, size: available(pacer, Math.max(ready, claimAt + pacer.leadMs)) }
}

/**
 * The pacer after a claim that took `claimMs`. The lead is the longest recent claim, slowly
 * forgotten: claiming too early only holds a batch a little; claiming too late delays it, and
 * every later batch of its slot with it.
 */
export const claimTook = (pacer: DispatchPacer, claimMs: number): DispatchPacer => ({
  ...pacer,
  leadMs: Math.min(MAX_LEAD_MS, Math.max(claimMs, pacer.leadMs * 0.99))
})
