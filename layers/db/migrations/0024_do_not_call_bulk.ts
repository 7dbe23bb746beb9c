import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A do-not-call list takes a million numbers in one import, and the foreign key to `organizations`
 * checked each one (a trigger per row: nearly half the import's time in the database). Numbers are
 * only ever listed for the organization of the request, run or call that lists them, so the
 * reference is kept by deleting an organization's numbers with the organization instead.
 */
export const doNotCallBulk = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE do_not_call_numbers DROP CONSTRAINT IF EXISTS do_not_call_numbers_organization_id_fkey`
  yield* sql`
    CREATE FUNCTION talkgraph_organization_do_not_call_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM do_not_call_numbers WHERE organization_id = OLD.id;
      RETURN OLD;
    END $$`
  yield* sql`
    CREATE TRIGGER organizations_do_not_call_removed AFTER DELETE ON organizations
    FOR EACH ROW EXECUTE FUNCTION talkgraph_organization_do_not_call_removed()`
})
