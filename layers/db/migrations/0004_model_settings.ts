import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * One row of model settings per organization. Each section (llm, stt, tts) is a JSON object whose
 * `api_key_sealed` holds the key encrypted by SecretBox; the plaintext key is never stored.
 */
export const modelSettings = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE organization_model_settings (
      organization_id bigint PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
      llm jsonb,
      stt jsonb,
      tts jsonb,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
