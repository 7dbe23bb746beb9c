import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Expectations, TestCase } from "../../src/agentTests/testCase.ts"

interface CaseRow {
  readonly id: number
  readonly workflow_id: number
  readonly name: string
  readonly persona: string
  readonly variables: Record<string, unknown>
  readonly max_turns: number
  readonly expectations: Expectations
  readonly interrupts: boolean
  readonly created_at: Date
  readonly updated_at: Date
}

const toTestCase = (row: CaseRow): TestCase => ({
  id: Number(row.id),
  agent_id: Number(row.workflow_id),
  name: row.name,
  persona: row.persona,
  variables: row.variables,
  max_turns: row.max_turns,
  expectations: row.expectations,
  interrupts: row.interrupts,
  created_at: row.created_at,
  updated_at: row.updated_at
})

export interface CaseContent {
  readonly name: string
  readonly persona: string
  readonly variables: Readonly<Record<string, unknown>>
  readonly max_turns: number
  readonly expectations: Expectations
  readonly interrupts: boolean
}

/** Test cases, always addressed under their organization and agent. Database failures are defects. */
export const makeTestCaseRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(
    "id, workflow_id, name, persona, variables, max_turns, expectations, interrupts, created_at, updated_at"
  )

  const agentExists = (organizationId: number, agentId: number) =>
    sql<{ id: number }>`SELECT id FROM workflows WHERE id = ${agentId} AND organization_id = ${organizationId}`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  const page = (organizationId: number, agentId: number, limit: number, offset: number) =>
    Effect.all({
      items: sql<CaseRow>`
        SELECT ${columns} FROM agent_tests WHERE organization_id = ${organizationId} AND workflow_id = ${agentId}
        ORDER BY id LIMIT ${limit} OFFSET ${offset}`.pipe(Effect.map((rows) => rows.map(toTestCase))),
      total: sql<{ count: number }>`
        SELECT count(*)::integer AS count FROM agent_tests
        WHERE organization_id = ${organizationId} AND workflow_id = ${agentId}`.pipe(
        Effect.map((rows) => rows[0]?.count ?? 0)
      )
    }).pipe(Effect.orDie)

  /** The agent's cases among `ids` (all of them when `ids` is undefined), in id order. */
  const some = (organizationId: number, agentId: number, ids: ReadonlyArray<number> | undefined) =>
    sql<CaseRow>`
      SELECT ${columns} FROM agent_tests WHERE organization_id = ${organizationId} AND workflow_id = ${agentId}
      ${ids === undefined ? sql`` : sql`AND id IN ${sql.in(ids)}`}
      ORDER BY id`.pipe(Effect.map((rows) => rows.map(toTestCase)), Effect.orDie)

  const one = (organizationId: number, agentId: number, testId: number) =>
    sql<CaseRow>`
      SELECT ${columns} FROM agent_tests
      WHERE id = ${testId} AND organization_id = ${organizationId} AND workflow_id = ${agentId}`.pipe(
      Effect.map((rows) => (rows[0] ? toTestCase(rows[0]) : null)),
      Effect.orDie
    )

  const insert = (organizationId: number, agentId: number, content: CaseContent, now: Date) =>
    sql<CaseRow>`
      INSERT INTO agent_tests (organization_id, workflow_id, name, persona, variables, max_turns, expectations,
                               interrupts, created_at, updated_at)
      VALUES (${organizationId}, ${agentId}, ${content.name}, ${content.persona},
              ${JSON.stringify(content.variables)}::jsonb, ${content.max_turns},
              ${JSON.stringify(content.expectations)}::jsonb, ${content.interrupts}, ${now}, ${now})
      RETURNING ${columns}`.pipe(Effect.map((rows) => toTestCase(rows[0]!)), Effect.orDie)

  const replace = (organizationId: number, agentId: number, testId: number, content: CaseContent, now: Date) =>
    sql<CaseRow>`
      UPDATE agent_tests SET name = ${content.name}, persona = ${content.persona},
        variables = ${JSON.stringify(content.variables)}::jsonb, max_turns = ${content.max_turns},
        expectations = ${JSON.stringify(content.expectations)}::jsonb, interrupts = ${content.interrupts},
        updated_at = ${now}
      WHERE id = ${testId} AND organization_id = ${organizationId} AND workflow_id = ${agentId}
      RETURNING ${columns}`.pipe(Effect.map((rows) => (rows[0] ? toTestCase(rows[0]) : null)), Effect.orDie)

  const remove = (organizationId: number, agentId: number, testId: number) =>
    sql<{ id: number }>`
      DELETE FROM agent_tests WHERE id = ${testId} AND organization_id = ${organizationId} AND workflow_id = ${agentId}
      RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

  /** The agent's name and the definition its cases are written for: the latest draft, else the published one. */
  const latestDefinition = (organizationId: number, agentId: number) =>
    sql<{ name: string; workflow_definition: unknown }>`
      SELECT w.name, d.workflow_definition
      FROM workflows w JOIN workflow_definitions d ON d.workflow_id = w.id
      WHERE w.id = ${agentId} AND w.organization_id = ${organizationId} AND d.version_status IN ('draft', 'published')
      ORDER BY (d.version_status = 'draft') DESC, d.version_number DESC
      LIMIT 1`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

  return { agentExists, page, some, one, insert, replace, remove, latestDefinition }
})

export type TestCaseRows = Effect.Effect.Success<typeof makeTestCaseRows>
