import { type CallingHours, nextOpening } from "./callingHours.ts"
import { zonesOfKey } from "./recipientZones.ts"

/** How long a zone set with no opening in sight waits before the claim looks again. */
const RECHECK_MS = 86_400_000

/**
 * For each of a campaign's zone sets (`zoneKey`s) whose window is closed at `now`, when it opens
 * next (ISO). Sets that are open, and every set when the hours are off, are absent: the claim dials
 * their contacts, and moves the others' next attempt to the opening.
 */
export const closedZoneSets = (
  hours: CallingHours | null | undefined,
  keys: ReadonlyArray<string>,
  now: number
): Record<string, string> => {
  const closed: Record<string, string> = {}
  if (!hours?.enabled) return closed
  for (const key of keys) {
    const opens = nextOpening(hours, zonesOfKey(key), now)
    if (opens !== now) closed[key] = new Date(opens ?? now + RECHECK_MS).toISOString()
  }
  return closed
}
