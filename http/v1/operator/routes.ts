import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { Identity } from "../../../services/Identity.ts"
import { OperatorAccess } from "../../../services/OperatorAccess.ts"
import { ValidationFailed } from "../../../src/domain/errors.ts"
import { Role } from "../../../src/domain/roles.ts"
import { OPERATOR_TOKEN_HEADER } from "../../../src/identity/tokens.ts"

const OperatorUserRequest = Schema.Struct({
  email: Schema.String,
  password: Schema.String,
  name: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(200)), { default: () => "" }),
  organization_id: Schema.optional(Schema.Int.pipe(Schema.positive())),
  role: Schema.optional(Role)
})

const notFound = HttpServerResponse.unsafeJson({ detail: "Not Found" }, { status: 404 })

/**
 * `talkgraph user create` while the server holds the embedded database: the command sends the
 * operator token from the data dir, and the user is created by the same service (and checked by
 * the same rule) as when the command opens the database itself. Not part of the public API: a
 * request without the token is answered as if the route did not exist.
 */
export const OperatorRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const access = yield* OperatorAccess
    const identity = yield* Identity
    yield* router.post(
      "/api/v1/operator/users",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (!access.admits(request.headers[OPERATOR_TOKEN_HEADER] ?? "")) return notFound
        const input = yield* HttpServerRequest.schemaBodyJson(OperatorUserRequest).pipe(
          Effect.mapError(() =>
            ValidationFailed.single(
              ["body"],
              "Expected {email, password, name?, organization_id?, role?}",
              "model_attributes_type"
            )
          )
        )
        const user = yield* identity.createUser({
          email: input.email,
          password: input.password,
          name: input.name,
          organizationId: input.organization_id,
          role: input.role
        })
        return HttpServerResponse.unsafeJson(user)
      })
    )
  })
)
