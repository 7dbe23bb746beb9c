import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CompliancePolicies } from "../../../services/CompliancePolicies.ts"
import { Api } from "../../api.ts"
import { requireRole, requireScope } from "../../security.ts"

const read = requireScope("campaigns:read")
const admin = Effect.zipRight(requireScope("campaigns:write"), requireRole("admin"))

export const CompliancePolicyHandlers = HttpApiBuilder.group(
  Api,
  "compliancePolicy",
  (handlers) =>
    Effect.gen(function*() {
      const policies = yield* CompliancePolicies
      return handlers
        .handle("get", () => Effect.flatMap(read, (principal) => policies.get(principal)))
        .handle("put", ({ payload }) => Effect.flatMap(admin, (principal) => policies.put(principal, payload)))
    })
)
