import * as net from "node:net"
import pg from "pg"

/** CancelRequest's code in the PostgreSQL protocol (1234 << 16 | 5678). */
const CANCEL_REQUEST_CODE = 80877102
/** How long the server may take to process a cancel request before the connection is given up. */
const CANCEL_CONFIRM_MS = 5000

type PoolRelease = (error?: Error | boolean) => void

/** How `@effect/sql` ends a transaction or savepoint that failed or was interrupted. */
const ROLLBACK = /^ROLLBACK(\s+TO\s+SAVEPOINT\b|$)/i

interface BackendKey {
  readonly processId: number
  readonly secretKey: number
}

/**
 * A pooled `pg` connection that goes back to the pool only once it is idle, and whose statement,
 * when its caller gives up on it, is cancelled on this connection's own backend and nowhere else.
 *
 * `@effect/sql-pg` cancels an interrupted statement with `SELECT pg_cancel_backend(pid)` run
 * through the pool, while handing the connection back the moment the statement ends. That cancel
 * waits for a free connection, and by the time it runs the connection may already carry another
 * request's statement, possibly another organization's, which then fails "canceling statement
 * due to user request"; a cancel for a transaction's connection, and every cancel on the embedded
 * database's single connection, even waits for the very connection it is meant to free. So the
 * backend's process id is not shown to it (no cancel is made that way), and instead a connection
 * released while its statement still runs (the interrupted request's release):
 *
 * 1. sends PostgreSQL's CancelRequest over a socket of its own, with this backend's secret key,
 *    and waits until the server has processed it (it closes that socket);
 * 2. waits until its statements have ended (finished, or failed as cancelled);
 * 3. only then goes back to the pool. A cancel that reaches an idle backend is discarded by the
 *    server, so nothing of it reaches the next statement. If the server does not confirm the
 *    cancel in time, the connection is closed instead of reused.
 *
 * An interrupted transaction is abandoned the same way: its ROLLBACK, arriving while the
 * transaction's statement still runs, first cancels that statement and is sent once the cancel is
 * processed. And a connection released inside a transaction is closed, never reused.
 */
export class PooledConnection extends pg.Client {
  /** Set by node-postgres from BackendKeyData (through the accessors below), read only here. */
  declare private backendKey: BackendKey | undefined
  declare private pendingProcessId: number | undefined
  declare private poolRelease: PoolRelease | undefined
  private running = 0
  private idleWaiters: Array<() => void> = []

  // node-postgres writes these when the server sends BackendKeyData; `@effect/sql-pg` reads
  // `processID` to decide whether to cancel through the pool, and finds nothing.
  get processID(): undefined {
    return undefined
  }
  set processID(value: number | null) {
    this.pendingProcessId = value ?? undefined
  }
  get secretKey(): undefined {
    return undefined
  }
  set secretKey(value: number | null) {
    this.backendKey = this.pendingProcessId === undefined || value === null
      ? undefined
      : { processId: this.pendingProcessId, secretKey: value }
  }

  // pg-pool sets `release` on every checkout; callers get the version that waits for idle.
  get release(): PoolRelease {
    return (error) => this.handBack(error)
  }
  set release(release: PoolRelease) {
    this.poolRelease = release
  }

  override query(...args: Array<any>): any {
    const last = args.length - 1
    if (typeof args[last] === "function") {
      const callback = args[last]
      this.started()
      args[last] = (...outcome: Array<unknown>) => {
        this.ended()
        callback(...outcome)
      }
      if (this.running > 1 && typeof args[0] === "string" && ROLLBACK.test(args[0])) {
        // The transaction is being abandoned while its statement runs (its request was interrupted).
        this.cancelStatement().then((confirmed) => {
          // Sent only once the cancel is processed, so the cancel can never hit the ROLLBACK itself.
          if (!confirmed) void this.end()
          ;(super.query as (...args: Array<any>) => any)(...args)
        })
        return undefined
      }
      return (super.query as (...args: Array<any>) => any)(...args)
    }
    const [first] = args
    if (first !== null && typeof first === "object" && typeof first.submit === "function") {
      this.watchSubmittable(first)
      return super.query(first)
    }
    this.started()
    const result = (super.query as (...args: Array<any>) => any)(...args)
    Promise.resolve(result).then(() => this.ended(), () => this.ended())
    return result
  }

  /**
   * Sends a CancelRequest for this connection's backend; resolves `true` once nothing of it can
   * arrive later (the server processed it, or it was never sent), `false` if that is not known.
   */
  protected cancelStatement(): Promise<boolean> {
    const key = this.backendKey
    if (key === undefined) return Promise.resolve(true)
    return new Promise((resolve) => {
      const socket = this.host.startsWith("/")
        ? net.connect(`${this.host}/.s.PGSQL.${this.port}`)
        : net.connect(this.port, this.host)
      let sent = false
      let failed = false
      const timer = setTimeout(() => {
        failed = true
        socket.destroy()
      }, CANCEL_CONFIRM_MS)
      socket.once("connect", () => {
        const packet = Buffer.alloc(16)
        packet.writeInt32BE(16, 0)
        packet.writeInt32BE(CANCEL_REQUEST_CODE, 4)
        packet.writeInt32BE(key.processId, 8)
        packet.writeInt32BE(key.secretKey, 12)
        sent = true
        socket.end(packet)
      })
      socket.on("error", () => {
        failed = true
      })
      socket.resume()
      socket.once("close", () => {
        clearTimeout(timer)
        resolve(!sent || !failed)
      })
    })
  }

  private started() {
    this.running++
  }

  private ended() {
    this.running--
    if (this.running > 0) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const waiter of waiters) waiter()
  }

  private watchSubmittable(submittable: pg.Submittable & Record<string, any>) {
    this.started()
    let ended = false
    const end = () => {
      if (ended) return
      ended = true
      this.ended()
    }
    for (const method of ["handleReadyForQuery", "handleError"] as const) {
      const original = submittable[method]
      submittable[method] = function(this: unknown, ...args: Array<unknown>) {
        end()
        return original?.apply(this, args)
      }
    }
  }

  private idle(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private handBack(error?: Error | boolean) {
    const release = this.poolRelease!
    if (error || this.running === 0) return release(error ?? this.leftInTransaction())
    // The connection is still ours until released: an error on it now has nobody else to hear it.
    let broken: Error | undefined
    const onError = (cause: Error) => {
      broken = cause
    }
    this.on("error", onError)
    Promise.all([this.cancelStatement(), this.idle()]).then(([confirmed]) => {
      this.off("error", onError)
      release(
        broken ??
          (confirmed ? this.leftInTransaction() : new Error("The cancel of an abandoned statement was not confirmed"))
      )
    })
  }

  /**
   * A connection still inside a transaction (its ROLLBACK failed) would hand that transaction's
   * state to the next request: it is closed instead of reused.
   */
  private leftInTransaction(): Error | undefined {
    const status = this.getTransactionStatus()
    return status === "T" || status === "E" ? new Error(`Released inside a transaction (status ${status})`) : undefined
  }
}
