import { Context, type Effect } from "effect"
import type { CsvContactsOptions, CsvContactsSummary } from "../src/campaigns/csvContacts.ts"

export interface ContactImportJob {
  readonly campaignId: number
  /** The storage key of the uploaded CSV. */
  readonly sourceId: string
  readonly options: Omit<CsvContactsOptions, "batchSize" | "onHeader">
}

/** How an import ended. */
export type ImportOutcome =
  | { readonly _tag: "Loaded"; readonly summary: CsvContactsSummary }
  /** The file cannot be used: every problem found, with row numbers. */
  | { readonly _tag: "Refused"; readonly problems: ReadonlyArray<string> }
  /** Cancelled, or stopped by a failure that is not the file's. */
  | { readonly _tag: "Stopped"; readonly reason: string }

export interface RunningImport {
  /** `true` once the header row is accepted; `false` when the import ended before that. */
  readonly headerAccepted: Effect.Effect<boolean>
  readonly outcome: Effect.Effect<ImportOutcome>
}

/**
 * Loads campaigns' contacts in the background, in short transactions, under this process's name;
 * publishes them in one update when the whole file is stored, marks the campaign failed (and
 * clears what was stored) when it cannot be, and fails imports whose loading process stopped.
 */
export interface ContactImportsShape {
  /** The name this process loads under (`campaigns.import_owner`). */
  readonly owner: string
  /** Starts loading the contacts of a campaign inserted with `import_status = 'loading'` under `owner`. */
  readonly start: (job: ContactImportJob) => Effect.Effect<RunningImport>
  /**
   * Fails the imports whose loading process has been silent past the lapse (it stopped or lost
   * the database) and clears what failed imports left behind. Runs every 30 seconds by itself.
   */
  readonly sweep: Effect.Effect<void>
}

export class ContactImports extends Context.Tag("talkgraph/ContactImports")<ContactImports, ContactImportsShape>() {}
