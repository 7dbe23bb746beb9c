/**
 * The instants a statement parameter can carry to PostgreSQL. Dates travel as ISO 8601 text, which
 * writes 1 BC as year 0000 and years past 9999 with a sign (`+010000-…`); PostgreSQL refuses both
 * ("date/time field value out of range"). Instants read from a request are held to these bounds
 * when decoded, so that such a value is the caller's 422 and never the database's error.
 */
export const EARLIEST_STORABLE = new Date("0001-01-01T00:00:00.000Z")
export const LATEST_STORABLE = new Date("9999-12-31T23:59:59.999Z")

export const isStorableInstant = (instant: Date): boolean =>
  instant.getTime() >= EARLIEST_STORABLE.getTime() && instant.getTime() <= LATEST_STORABLE.getTime()
