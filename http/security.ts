import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { ApiKeyVerifications } from "../services/ApiKeyVerifications.ts"
import { Identity } from "../services/Identity.ts"
import { Forbidden } from "../src/domain/errors.ts"
import { hasScope, type Principal } from "../src/domain/principal.ts"
import { type Role, roleRefusal } from "../src/domain/roles.ts"
import type { Scope } from "../src/domain/scopes.ts"
import { isApiKey } from "../src/identity/tokens.ts"
import { HttpAuthFailure } from "./errors.ts"

/** The authenticated caller of the current request. */
export class CurrentPrincipal extends Context.Tag("talkgraph/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

const security = {
  bearer: HttpApiSecurity.bearer,
  apiKey: HttpApiSecurity.apiKey({ in: "header", key: "X-API-Key" })
}

/** v1: a session token or an API key, in `Authorization: Bearer` or `X-API-Key`. */
export class V1Auth extends HttpApiMiddleware.Tag<V1Auth>()("talkgraph/V1Auth", {
  provides: CurrentPrincipal,
  failure: HttpAuthFailure,
  security
}) {}

/** v2: API keys only, in either header. */
export class V2Auth extends HttpApiMiddleware.Tag<V2Auth>()("talkgraph/V2Auth", {
  provides: CurrentPrincipal,
  failure: HttpAuthFailure,
  security
}) {}

/**
 * The platform tries each declared scheme in turn and reports the last one's failure, so both
 * schemes resolve the caller from the raw headers the same way: `X-API-Key` wins when present.
 * An API key resolves to the same principal under either policy, so its recent verification is
 * reused; session tokens are always looked up (signing out must take effect at once everywhere).
 */
const schemeHandlers = (accepts: "sessionOrKey" | "keyOnly") =>
  Effect.gen(function*() {
    const identity = yield* Identity
    const verifications = yield* ApiKeyVerifications
    const resolve = () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const apiKey = request.headers["x-api-key"]
        const authorization = request.headers["authorization"] ?? ""
        const bearer = /^Bearer\s+(.+)$/i.exec(authorization)?.[1] ?? ""
        const credential = (apiKey && apiKey.trim() !== "" ? apiKey : bearer).trim()
        const authenticate = identity.authenticate(credential, accepts)
        return isApiKey(credential) ? verifications.verified(credential, authenticate) : authenticate
      })
    return { bearer: resolve, apiKey: resolve }
  })

export const V1AuthLive = Layer.effect(V1Auth, schemeHandlers("sessionOrKey"))
export const V2AuthLive = Layer.effect(V2Auth, schemeHandlers("keyOnly"))

/** Fails with 403 unless the caller's credential carries every one of `scopes`. */
export const requireScope = (...scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(CurrentPrincipal, (principal) => {
    const missing = scopes.filter((scope) => !hasScope(principal, scope))
    return missing.length === 0
      ? Effect.succeed(principal)
      : Effect.fail(
        new Forbidden({
          message: `This API key lacks the ${missing.map((scope) => `"${scope}"`).join(" and ")} scope${
            missing.length > 1 ? "s" : ""
          }`
        })
      )
  })

/**
 * Fails with 403 unless the caller's role is at least `minimum`: an organization's settings and
 * its members are managed by admins and owners. A key acts with its creator's current role.
 */
export const requireRole = (minimum: Role) =>
  Effect.flatMap(CurrentPrincipal, (principal) => {
    const refusal = roleRefusal(principal, minimum)
    return refusal ? Effect.fail(new Forbidden({ message: refusal.message })) : Effect.succeed(principal)
  })

/** Fails with 403, saying `why`, unless the caller signed in with a session rather than an API key. */
export const requireSession = (why: string) =>
  Effect.flatMap(
    CurrentPrincipal,
    (principal) =>
      principal.via === "session" ? Effect.succeed(principal) : Effect.fail(new Forbidden({ message: why }))
  )
