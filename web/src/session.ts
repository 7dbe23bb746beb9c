import type { components } from "./api/schema.ts"

type LoginResponse = components["schemas"]["LoginResponse"]

const KEY = "talkgraph.session"

export type SessionEndReason = "signed-out" | "expired"

type Listener = () => void

const listeners = new Set<Listener>()
let expiryTimer: ReturnType<typeof setTimeout> | undefined
let lastEnd: SessionEndReason | undefined

const read = (): LoginResponse | undefined => {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) ?? "null") as LoginResponse | null
    if (!stored || Date.parse(stored.expires_at) <= Date.now()) return undefined
    return stored
  } catch {
    return undefined
  }
}

let current = read()

const notify = () => listeners.forEach((listener) => listener())

const scheduleExpiry = () => {
  clearTimeout(expiryTimer)
  if (!current) return
  // Timers longer than ~24.8 days overflow; a session that long is re-checked on the next load anyway.
  const delay = Math.min(Date.parse(current.expires_at) - Date.now(), 2 ** 31 - 1)
  expiryTimer = setTimeout(() => session.end("expired"), delay)
}

/**
 * The signed-in user and their token, kept in localStorage so a reload stays signed in, and ended
 * when the token expires (or the server says it is no longer valid).
 */
export const session = {
  current: () => current,
  lastEnd: () => lastEnd,
  begin(login: LoginResponse) {
    current = login
    lastEnd = undefined
    localStorage.setItem(KEY, JSON.stringify(login))
    scheduleExpiry()
    notify()
  },
  end(reason: SessionEndReason) {
    current = undefined
    lastEnd = reason
    localStorage.removeItem(KEY)
    scheduleExpiry()
    notify()
  },
  subscribe(listener: Listener) {
    listeners.add(listener)
    return () => void listeners.delete(listener)
  }
}

scheduleExpiry()
