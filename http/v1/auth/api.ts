import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Role } from "../../../src/domain/roles.ts"
import { EmptyObject, Timestamp } from "../../../src/domain/wireTypes.ts"
import { NewEmail, NewPassword } from "../../../src/identity/credentials.ts"
import {
  HttpConflict,
  HttpForbidden,
  HttpTooManyRequests,
  HttpUnauthenticated,
  HttpValidationFailed
} from "../../errors.ts"
import { bodySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

export const LoginRequest = bodySchema("Login", {
  email: Schema.String.pipe(Schema.maxLength(254)),
  password: Schema.String.pipe(Schema.maxLength(1024))
})

export const SignupRequest = bodySchema("Signup", {
  email: NewEmail,
  password: NewPassword,
  name: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(200)), { default: () => "" })
})

export const UserResponse = Schema.Struct({
  id: Schema.Int,
  email: Schema.String,
  name: Schema.String,
  organization_id: Schema.Int
}).annotations({ identifier: "UserResponse" })

export const MeResponse = Schema.Struct({
  ...UserResponse.fields,
  organization_name: Schema.String,
  role: Role.annotations({ description: "Your role in the organization, which decides what you may change" })
}).annotations({ identifier: "MeResponse" })

export const LoginResponse = Schema.Struct({
  token: Schema.String,
  expires_at: Timestamp,
  user: UserResponse
}).annotations({ identifier: "LoginResponse" })

export const AuthApi = HttpApiGroup.make("auth")
  .annotate(OpenApi.Description, "Sessions: sign in and out, sign up, and who the caller is.")
  .add(
    HttpApiEndpoint.post("login", "/login")
      .annotate(OpenApi.Summary, "Sign in")
      .annotate(
        OpenApi.Description,
        "Exchanges an email and password for a session token, sent afterwards as `Authorization: Bearer …`. After five failed logins for an account within 15 minutes, its logins are refused for 5 minutes (429 with `Retry-After`)."
      )
      .setPayload(LoginRequest)
      .addSuccess(LoginResponse)
      .addError(HttpUnauthenticated)
      .addError(HttpTooManyRequests)
  )
  .add(
    HttpApiEndpoint.post("signup", "/signup")
      .annotate(OpenApi.Summary, "Create an account")
      .annotate(
        OpenApi.Description,
        "Creates a user with an organization of its own and signs it in. Open only on servers started with `TALKGRAPH_SIGNUP=true` (403 otherwise); an email already registered answers 409."
      )
      .setPayload(SignupRequest)
      .addSuccess(LoginResponse)
      .addError(HttpForbidden)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
      .addError(HttpTooManyRequests)
  )
  .add(
    HttpApiEndpoint.post("logout", "/logout")
      .annotate(OpenApi.Summary, "Sign out")
      .annotate(
        OpenApi.Description,
        "Revokes the session token sent with this request, at once on every server process. API keys are revoked with DELETE /api/v1/user/api-keys/{id} (403 here)."
      )
      .addSuccess(EmptyObject)
      .addError(HttpForbidden)
      .middleware(V1Auth)
  )
  .add(
    HttpApiEndpoint.get("me", "/me")
      .annotate(OpenApi.Summary, "Current user")
      .annotate(
        OpenApi.Description,
        "The user and organization behind this request's credential (session token or API key), the organization's name and the user's role in it."
      )
      .addSuccess(MeResponse)
      .middleware(V1Auth)
  )
  .prefix("/api/v1/auth")
