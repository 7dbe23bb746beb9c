import { Console, Data, Effect, Either, Layer, Option, Schema } from "effect"
import { parseArgs } from "node:util"
import { DatabaseLive } from "../layers/database.ts"
import { IdentityLive } from "../layers/identity/identity.ts"
import { PasswordHashingLive } from "../layers/identity/passwordHashing.ts"
import { dataDirHolder, type OperatorEndpoint, runningOperatorEndpoint } from "../layers/operator/operatorFile.ts"
import { SecretBoxLive } from "../layers/secrets/secretBox.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { Identity, type NewUser, type UserView } from "../services/Identity.ts"
import { Role } from "../src/domain/roles.ts"
import { emailProblem, passwordProblem } from "../src/identity/credentials.ts"
import { OPERATOR_TOKEN_HEADER } from "../src/identity/tokens.ts"

export const userCreateUsage =
  "talkgraph user create --email E --password P [--name N] [--organization-id ID] [--role owner|admin|member]"

/** A refusal of the command, printed as one line. */
export class UserCommandFailed extends Data.TaggedError("UserCommandFailed")<{ readonly message: string }> {}

const fail = (message: string) => Effect.fail(new UserCommandFailed({ message }))

/** The arguments, checked by the same rule the API applies, every problem named at once. */
const parseUserCreate = (args: Array<string>) =>
  Effect.gen(function*() {
    const parsed = Either.try(() =>
      parseArgs({
        args,
        strict: true,
        options: {
          email: { type: "string" },
          password: { type: "string" },
          name: { type: "string", default: "" },
          "organization-id": { type: "string" },
          role: { type: "string" }
        }
      }).values
    )
    if (Either.isLeft(parsed)) return yield* fail(`${(parsed.left as Error).message}\nUsage: ${userCreateUsage}`)
    const values = parsed.right
    if (values.email === undefined || values.password === undefined) {
      return yield* fail(`--email and --password are required\nUsage: ${userCreateUsage}`)
    }
    const organization = values["organization-id"]
    const role = values.role === undefined ? Option.none() : Schema.decodeUnknownOption(Role)(values.role)
    const emailIssue = emailProblem(values.email)
    const passwordIssue = passwordProblem(values.password)
    const problems = [
      ...(emailIssue ? [`--email: ${emailIssue}`] : []),
      ...(passwordIssue ? [`--password: the password ${passwordIssue}`] : []),
      ...(organization !== undefined && !/^[1-9]\d{0,15}$/.test(organization)
        ? ["--organization-id must be a positive whole number"]
        : []),
      ...(values.role !== undefined && Option.isNone(role) ? ["--role must be owner, admin or member"] : [])
    ]
    if (problems.length > 0) return yield* fail(problems.join("; "))
    const user: NewUser = {
      email: values.email,
      password: values.password,
      name: values.name ?? "",
      organizationId: organization === undefined ? undefined : Number(organization),
      role: Option.getOrUndefined(role)
    }
    return user
  })

/** What the server's error body says, on one line. */
const detailOf = (body: unknown): string => {
  const detail = (body as { detail?: unknown } | undefined)?.detail
  if (typeof detail === "string") return detail
  if (Array.isArray(detail)) return detail.map((problem) => String((problem as { msg?: unknown }).msg)).join("; ")
  return "the server refused the request"
}

/** Asks the server that holds the embedded database to create the user. */
const createThroughServer = (endpoint: OperatorEndpoint, user: NewUser) =>
  Effect.tryPromise({
    try: async () => {
      const reply = await fetch(`${endpoint.url}/api/v1/operator/users`, {
        method: "POST",
        headers: { "content-type": "application/json", [OPERATOR_TOKEN_HEADER]: endpoint.token },
        body: JSON.stringify({
          email: user.email,
          password: user.password,
          name: user.name,
          ...(user.organizationId === undefined ? {} : { organization_id: user.organizationId }),
          ...(user.role === undefined ? {} : { role: user.role })
        }),
        signal: AbortSignal.timeout(30_000)
      })
      const body = await reply.json().catch(() => undefined)
      return { ok: reply.ok, body }
    },
    catch: (error) =>
      new UserCommandFailed({
        message: `Could not reach the running server (process ${endpoint.pid}) at ${endpoint.url}: ${
          (error as Error).message
        }`
      })
  }).pipe(Effect.flatMap(({ body, ok }) => (ok ? Effect.succeed(body as UserView) : fail(detailOf(body)))))

/** Just what creating a user needs: not the scheduler, storage or providers. */
const IdentityOnDatabase = IdentityLive.pipe(
  Layer.provide(Layer.mergeAll(PasswordHashingLive, SecretBoxLive)),
  Layer.provide(DatabaseLive)
)

const createInDatabase = (user: NewUser) =>
  Effect.flatMap(Identity, (identity) => identity.createUser(user)).pipe(Effect.provide(IdentityOnDatabase))

/**
 * `talkgraph user create`. On the embedded database while a server runs on it (the database is
 * then that process's alone), the server creates the user; otherwise the command opens the
 * database itself. Either way the user is checked and stored by the same service.
 */
export const userCreate = (args: Array<string>) =>
  Effect.gen(function*() {
    const user = yield* parseUserCreate(args)
    const config = yield* AppConfig
    const embedded = Option.isNone(config.databaseUrl)
    const server = embedded ? yield* runningOperatorEndpoint(config.dataDir) : Option.none()
    if (embedded && Option.isNone(server)) {
      const holder = yield* dataDirHolder(config.dataDir)
      if (Option.isSome(holder)) {
        return yield* fail(
          `The embedded database in ${config.dataDir} is in use by process ${holder.value}, which does not take commands ` +
            "(still starting, or an older talkgraph); try again once it serves, or add the user with POST /api/v1/organizations/members"
        )
      }
    }
    const created = Option.isSome(server)
      ? yield* createThroughServer(server.value, user)
      : yield* createInDatabase(user)
    yield* Console.log(`Created user ${created.email} (id ${created.id}) in organization ${created.organization_id}.`)
  })
