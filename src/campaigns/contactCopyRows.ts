import { contactZoneKey } from "../compliance/contactZones.ts"
import type { Contact } from "./csvContacts.ts"

/** The `campaign_contacts` columns a COPY of contacts fills, in the order `contactCopyRows` writes them. */
export const contactCopyColumns = [
  "campaign_id",
  "row_number",
  "phone_number",
  "context",
  "greeting_override",
  "time_zones"
] as const

/**
 * COPY's text format reads a backslash as an escape. JSON.stringify already writes every control
 * character (tab, newline, …) as `\t`, `\n`, …, so doubling the backslashes is all it needs.
 */
const copyText = (value: string) => (value.includes("\\") ? value.replaceAll("\\", "\\\\") : value)

/**
 * Contacts as PostgreSQL `COPY … FROM STDIN` text rows (tab-separated, `\N` for NULL), the same
 * values the multi-row INSERT stores: the context and greeting override as JSON, and the zones the
 * contact may be in (IANA names: nothing to escape). Written straight
 * into a buffer: a batch as one string would be large enough for V8's large-object space, which
 * only a full garbage collection empties.
 */
export const contactCopyRows = (campaignId: number, batch: ReadonlyArray<Contact>): Buffer => {
  let buffer = Buffer.allocUnsafe(batch.length * 128)
  let length = 0
  for (const contact of batch) {
    const greeting = contact.greeting_override === null ? "\\N" : copyText(JSON.stringify(contact.greeting_override))
    // E.164 numbers are `+` and digits: nothing to escape.
    const row = `${campaignId}\t${contact.row}\t${contact.phone_number}\t${
      copyText(JSON.stringify(contact.context))
    }\t${greeting}\t${contactZoneKey(contact.phone_number, contact.context) ?? "\\N"}\n`
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    if (length + row.length * 3 > buffer.length) {
      const larger = Buffer.allocUnsafe(Math.max(buffer.length * 2, length + row.length * 3))
      buffer.copy(larger, 0, 0, length)
      buffer = larger
    }
    length += buffer.write(row, length)
  }
  return buffer.subarray(0, length)
}
