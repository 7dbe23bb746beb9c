import { Schema } from "effect"

/**
 * Loading a campaign's contacts (README "Campaigns"): a file is read and stored in the background
 * while the campaign is `created` with its import `loading`; `ready` once every contact is stored
 * (published in one update, so a campaign never runs on part of its file); `failed` with the
 * reasons when the file turned out unusable, the campaign was cancelled meanwhile, or the process
 * loading it stopped. Only a ready campaign can start.
 */
export const ImportStatus = Schema.Literal("loading", "ready", "failed")
export type ImportStatus = typeof ImportStatus.Type

/** Loading the campaign's contacts, as a campaign shows it (README "Campaigns": large files load in the background). */
export const CampaignImport = Schema.Struct({
  status: ImportStatus,
  /** Contacts stored so far (all of them once ready). */
  contacts_loaded: Schema.Int,
  bytes_read: Schema.Int,
  bytes_total: Schema.NullOr(Schema.Int),
  /** Share of the file read, 0–1 (1 once ready). */
  progress: Schema.Number,
  /** Why the import failed; empty otherwise. */
  errors: Schema.Array(Schema.String)
}).annotations({ identifier: "CampaignImport" })
export type ImportProgress = typeof CampaignImport.Type

export const importProgress = (row: {
  readonly import_status: ImportStatus
  readonly import_contacts: number
  readonly import_bytes_read: number
  readonly import_bytes_total: number | null
  readonly import_errors: ReadonlyArray<string>
}): ImportProgress => ({
  status: row.import_status,
  contacts_loaded: row.import_contacts,
  bytes_read: row.import_bytes_read,
  bytes_total: row.import_bytes_total,
  progress: row.import_status === "ready"
    ? 1
    : row.import_bytes_total
    ? Math.min(1, Math.floor((row.import_bytes_read / row.import_bytes_total) * 1000) / 1000)
    : 0,
  errors: row.import_errors
})

/** The 409 for starting a campaign whose contacts are not all stored yet. */
export const startWhileLoading = (progress: ImportProgress) =>
  `Cannot start the campaign while its contacts are loading (${
    progress.contacts_loaded.toLocaleString("en-US")
  } stored, ` +
  `${Math.round(progress.progress * 100)}% of the file read); start it once import.status is "ready"`

/** The 409 for starting a campaign whose contacts failed to load. */
export const startAfterFailedImport = (progress: ImportProgress) =>
  `Cannot start the campaign: its contacts failed to load (${
    progress.errors[0] ?? "unknown reason"
  }); create it again from a corrected file`

export const cancelledWhileLoading = "The campaign was cancelled while its contacts were loading"

export const loaderStopped =
  "The import stopped before the end of the file (the server loading it stopped or lost the database); create the campaign again"

/**
 * Rows per statement on the embedded database, whose one backend runs nothing else while a
 * statement runs: sized after each statement so that one takes about `targetMs`, within bounds,
 * growing gently and shrinking at once.
 */
export const nextStatementRows = (
  rows: number,
  elapsedMs: number,
  targetMs: number,
  bounds: { readonly min: number; readonly max: number }
) => {
  const fitted = elapsedMs > 0 ? Math.floor((rows * targetMs) / elapsedMs) : bounds.max
  const next = fitted > rows ? Math.min(fitted, Math.ceil(rows * 1.5)) : fitted
  return Math.max(bounds.min, Math.min(bounds.max, next))
}
