import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { NewEmail, NewPassword } from "../../../src/identity/credentials.ts"
import { HttpConflict, HttpForbidden, HttpTooManyRequests, HttpUnauthenticated, HttpValidationFailed } from "../../errors.ts"
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
  id: Schema.Number,
  email: Schema.String,
  name: Schema.String,
  organization_id: Schema.Number
}).annotations({ identifier: "UserResponse" })

export const LoginResponse = Schema.Struct({
  token: Schema.String,
  expires_at: Schema.Date,
  user: UserResponse
}).annotations({ identifier: "LoginResponse" })

export const AuthApi = HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("login", "/login")
      .setPayload(LoginRequest)
      .addSuccess(LoginResponse)
      .addError(HttpUnauthenticated)
      .addError(HttpTooManyRequests)
  )
  .add(
    HttpApiEndpoint.post("signup", "/signup")
      .setPayload(SignupRequest)
      .addSuccess(LoginResponse)
      .addError(HttpForbidden)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
      .addError(HttpTooManyRequests)
  )
  .add(HttpApiEndpoint.post("logout", "/logout").addSuccess(Schema.Struct({})).addError(HttpForbidden).middleware(V1Auth))
  .add(HttpApiEndpoint.get("me", "/me").addSuccess(UserResponse).middleware(V1Auth))
  .prefix("/api/v1/auth")
