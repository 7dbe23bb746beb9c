import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Call } from "../../../src/calls/callRecord.ts"
import { JsonObject, Timestamp } from "../../../src/domain/wireTypes.ts"
import {
  HttpConflict,
  HttpForbidden,
  HttpNotFound,
  HttpTooManyRequests,
  HttpUpstreamFailed,
  HttpValidationFailed
} from "../../errors.ts"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V2Auth } from "../../security.ts"
import { Resource } from "../envelopes.ts"

const Id = Schema.Int.pipe(Schema.positive())

export const IdempotencyKey = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
  description:
    "The same key with the same request answers the call it made; with a different request it is refused (409). Also accepted as the `Idempotency-Key` header."
})

export const CreateCallRequest = bodySchema("CreateCall", {
  agent_id: Id.pipe(Schema.brand("WorkflowId")),
  phone_number: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  variables: Schema.optionalWith(JsonObject, { default: () => ({}) }).annotations({
    description: "Template variables for the agent's prompts (the run's initial_context)"
  }),
  telephony_configuration_id: Schema.optional(Schema.NullOr(Id.pipe(Schema.brand("TelephonyConfigId")))),
  from_phone_number_id: Schema.optional(Schema.NullOr(Id)),
  use_draft: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  scheduled_at: Schema.optional(Schema.NullOr(Timestamp)).annotations({
    description: "ISO 8601 date-time; placed as soon as a call slot is free from then on. Omitted: now."
  }),
  idempotency_key: Schema.optional(Schema.NullOr(IdempotencyKey))
})

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(IdempotencyKey)
})

const CallPath = pathSchema("Call", { call_id: IdFromPath })

/** Single outbound calls; `calls:write` to place one, `calls:read` to read it. */
export const CallsApi = HttpApiGroup.make("calls")
  .annotate(
    OpenApi.Description,
    "Single outbound calls of an agent, sharing the organization's concurrent-call limit with campaigns. Needs an API key with `calls:write` (place) or `calls:read` (read)."
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v2/calls")
      .annotate(OpenApi.Summary, "Place a call")
      .annotate(
        OpenApi.Description,
        "Dials `phone_number` with the agent through the given telephony configuration (else the organization's default outbound one) and caller number (else its default caller id), now or at `scheduled_at`. A request repeating an earlier one's idempotency key gets that request's call. 429 with Retry-After when the organization's concurrent-call limit is reached."
      )
      .setPayload(CreateCallRequest)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Resource(Call), { status: 201 })
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
      .addError(HttpTooManyRequests)
      .addError(HttpUpstreamFailed)
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v2/calls/:call_id")
      .annotate(OpenApi.Summary, "Get a call")
      .annotate(OpenApi.Description, "Where the call stands: scheduled, dialing, in_progress, completed or failed.")
      .setPath(CallPath)
      .addSuccess(Resource(Call))
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .middleware(V2Auth)
