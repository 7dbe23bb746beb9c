import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { CompliancePolicy } from "../../../src/compliance/compliancePolicy.ts"
import { HttpForbidden, HttpValidationFailed } from "../../errors.ts"
import { V1Auth } from "../../security.ts"

/** The organization's calling rules: calling hours in each recipient's local time. */
export const CompliancePolicyApi = HttpApiGroup.make("compliancePolicy")
  .annotate(
    OpenApi.Description,
    "Calling hours in each recipient's own time zone (from the contact's `timezone` column, else from the number), applied by every campaign that has no calling hours of its own. Off by default. Changing them needs an admin; API keys need `campaigns:write`."
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/organizations/compliance-policy")
      .annotate(OpenApi.Summary, "Get the calling rules")
      .annotate(
        OpenApi.Description,
        "The organization's calling hours (window, days, holidays) and frequency caps; the defaults (off) until set."
      )
      .addSuccess(CompliancePolicy)
  )
  .add(
    HttpApiEndpoint.put("put", "/api/v1/organizations/compliance-policy")
      .annotate(OpenApi.Summary, "Set the calling rules")
      .annotate(
        OpenApi.Description,
        "A contact whose number may be in several zones is called only while the hours are open in all of them. Contacts outside their hours wait and are called once they open."
      )
      .setPayload(CompliancePolicy)
      .addSuccess(CompliancePolicy)
      .addError(HttpValidationFailed)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
