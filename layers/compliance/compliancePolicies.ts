import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { CompliancePolicies } from "../../services/CompliancePolicies.ts"
import type { CallingHours } from "../../src/compliance/callingHours.ts"
import {
  type CompliancePolicy,
  defaultCompliancePolicy,
  type FrequencyCaps
} from "../../src/compliance/compliancePolicy.ts"
import type { Principal } from "../../src/domain/principal.ts"

export const CompliancePoliciesLive = Layer.effect(
  CompliancePolicies,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const get = Effect.fn("CompliancePolicies.get")(function*(principal: Principal) {
      const [row] = yield* sql<{ calling_hours: CallingHours; frequency_caps: FrequencyCaps }>`
        SELECT calling_hours, frequency_caps FROM organization_compliance_policies WHERE organization_id = ${principal.organizationId}`
      return row ? { calling_hours: row.calling_hours, frequency_caps: row.frequency_caps } : defaultCompliancePolicy
    }, Effect.orDie)

    const put = Effect.fn("CompliancePolicies.put")(function*(principal: Principal, policy: CompliancePolicy) {
      yield* sql`
        INSERT INTO organization_compliance_policies (organization_id, calling_hours, frequency_caps, updated_at)
        VALUES (${principal.organizationId}, ${JSON.stringify(policy.calling_hours)}::jsonb,
                ${JSON.stringify(policy.frequency_caps)}::jsonb, now())
        ON CONFLICT (organization_id) DO UPDATE
          SET calling_hours = EXCLUDED.calling_hours, frequency_caps = EXCLUDED.frequency_caps, updated_at = now()`
      return policy
    }, Effect.orDie)

    return CompliancePolicies.of({ get, put })
  })
)
