import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Agent tests: an agent's test cases (a simulated caller's persona, the contact's variables, a
 * turn limit and expectations) and its test runs. A run keeps what it was asked and its results
 * as JSON it rewrites as conversations finish; each conversation is an ordinary run (mode
 * `testchat`) so it is billed and shown like any chat. The process holding a run beats its
 * `heartbeat_at`; a run whose beat stopped (its process died) is failed by any other process.
 */
export const agentTests = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_tests (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workflow_id bigint NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
      name text NOT NULL,
      persona text NOT NULL,
      variables jsonb NOT NULL DEFAULT '{}',
      max_turns integer NOT NULL,
      expectations jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX agent_tests_workflow ON agent_tests (workflow_id, id)`
  yield* sql`
    CREATE TABLE agent_test_runs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workflow_id bigint NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
      state text NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed')),
      request jsonb NOT NULL,
      results jsonb NOT NULL DEFAULT '[]',
      error text,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      ended_at timestamptz,
      heartbeat_at timestamptz NOT NULL
    )`
  // The usage report's `testRuns: only` filter reads an organization's test conversations by this.
  yield* sql`CREATE INDEX runs_test_conversations ON runs (organization_id, created_at) WHERE mode = 'testchat'`
  yield* sql`CREATE INDEX agent_test_runs_workflow ON agent_test_runs (workflow_id, id DESC)`
  yield* sql`CREATE INDEX agent_test_runs_unfinished ON agent_test_runs (heartbeat_at) WHERE state IN ('queued', 'running')`
})
