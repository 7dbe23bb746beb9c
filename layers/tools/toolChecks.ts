import { Effect, Option } from "effect"
import type { CredentialsShape } from "../../services/Credentials.ts"
import type { OutboundHttpShape } from "../../services/OutboundHttp.ts"
import { type FieldProblem, ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"
import { hostOf, urlTemplateProblem } from "../../src/tools/httpToolRequest.ts"
import { isTimeZone, type ToolDefinition } from "../../src/tools/toolDefinition.ts"
import { destinationProblems } from "../../src/tools/transferDestination.ts"

const at = (...loc: ReadonlyArray<string | number>) => ["body", "definition", ...loc]

const problem = (loc: ReadonlyArray<string | number>, msg: string): FieldProblem => ({ loc, msg, type: "value_error" })

/**
 * A definition checked before it is saved, every problem at once: the URL's form (an HTTP API's
 * or an MCP server's) and the outbound policy, unique parameter names, the time zone, and the credential (the organization's
 * own, and bound to this URL's host: a stored credential never follows a changed host). Answers
 * the credential's row id.
 */
export const checkDefinition = (
  outbound: OutboundHttpShape,
  credentials: CredentialsShape,
  organizationId: OrganizationId,
  definition: ToolDefinition
): Effect.Effect<number | null, ValidationFailed> =>
  Effect.gen(function*() {
    const problems: Array<FieldProblem> = []
    let credentialId: number | null = null
    /** The credential's row id when it is the organization's and bound (or now binds) to `host`. */
    const credentialCheck = (
      uuid: string | null | undefined,
      host: string | null,
      loc: ReadonlyArray<string | number> = at("config", "credential_uuid")
    ) =>
      Effect.gen(function*() {
        if (!uuid) return null
        const credential = yield* credentials.forRequest(organizationId, uuid)
        if (Option.isNone(credential)) {
          problems.push(problem(loc, `"${uuid}" is not a credential of this organization`))
          return null
        }
        if (host === null) return null
        if (yield* credentials.bind(organizationId, credential.value.id, host)) return credential.value.id
        problems.push(problem(
          loc,
          `This credential is bound to ${credential.value.boundHost}, not ${host}: a stored credential never follows a changed host. Send its secret again (PUT /api/v1/credentials/${uuid} with credential_data and host) or use a new credential`
        ))
        return null
      })
    if (definition.type === "current_time" && definition.config.timezone !== undefined) {
      if (!isTimeZone(definition.config.timezone)) {
        problems.push(
          problem(at("config", "timezone"), `"${definition.config.timezone}" is not a time zone such as Europe/Paris`)
        )
      }
    }
    if (definition.type === "http_api") {
      const { config } = definition
      const urlProblem = urlTemplateProblem(config.url)
      const host = hostOf(config.url)
      if (urlProblem !== null) problems.push(problem(at("config", "url"), `url ${urlProblem}`))
      else {
        const origin = new URL(config.url.replace(/\{\{[^}]*\}\}/g, "x")).origin
        const refusal = yield* outbound.refusal("tool", origin)
        if (Option.isSome(refusal)) problems.push(problem(at("config", "url"), `url refused: ${refusal.value}`))
      }
      const names = new Set<string>()
      const all = [
        ...(config.parameters ?? []).map((parameter, index) => ({
          name: parameter.name,
          loc: at("config", "parameters", index, "name")
        })),
        ...(config.preset_parameters ?? []).map((preset, index) => ({
          name: preset.name,
          loc: at("config", "preset_parameters", index, "name")
        }))
      ]
      for (const { loc, name } of all) {
        if (names.has(name)) problems.push(problem(loc, `"${name}" is used by another parameter`))
        names.add(name)
      }
      credentialId = yield* credentialCheck(config.credential_uuid, host)
    }
    if (definition.type === "mcp") {
      const { config } = definition
      const urlProblem = config.url.includes("{{")
        ? "must be the server's address itself, without placeholders"
        : urlTemplateProblem(config.url)
      if (urlProblem !== null) problems.push(problem(at("config", "url"), `url ${urlProblem}`))
      else {
        const refusal = yield* outbound.refusal("tool", new URL(config.url).origin)
        if (Option.isSome(refusal)) problems.push(problem(at("config", "url"), `url refused: ${refusal.value}`))
      }
      credentialId = yield* credentialCheck(config.credential_uuid, urlProblem === null ? hostOf(config.url) : null)
    }
    if (definition.type === "transfer_call") {
      // A carrier dials numbers and SIP URIs only: anything else would fail on the call, not here.
      for (const found of destinationProblems(definition.config)) {
        problems.push(problem(at("config", ...found.loc), found.msg))
      }
    }
    if (definition.type === "transfer_call" && definition.config.resolver) {
      // The resolver's credential follows the rule of every tool's: the organization's, bound to its host.
      const { resolver } = definition.config
      const resolverHost = urlTemplateProblem(resolver.url) === null ? hostOf(resolver.url) : null
      credentialId = yield* credentialCheck(
        resolver.credential_uuid,
        resolverHost,
        at("config", "resolver", "credential_uuid")
      )
    }
    if (problems.length > 0) {
      return yield* new ValidationFailed({ message: "The tool definition cannot be used", problems })
    }
    return credentialId
  })
