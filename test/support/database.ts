/**
 * The suite runs against PostgreSQL when DATABASE_URL is set (CI: a database of its own) and
 * against the embedded PGlite otherwise.
 */
export const postgresUrl = (): string | undefined => process.env.DATABASE_URL || undefined

export const databaseKind = (): "postgres" | "pglite" => (postgresUrl() ? "postgres" : "pglite")

declare module "vitest" {
  export interface ProvidedContext {
    /** A migrated PGlite data dir that each test server copies instead of running initdb again. */
    pgliteTemplate: string
  }
}
