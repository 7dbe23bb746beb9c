import { Schema } from "effect"

/** The PostgreSQL of DATABASE_URL could not be reached or refused us; the message says which. */
export class DatabaseUnreachable extends Schema.TaggedError<DatabaseUnreachable>()("DatabaseUnreachable", {
  message: Schema.String
}) {}

const fieldOf = (cause: unknown, field: "code" | "message") =>
  typeof cause === "object" && cause !== null && field in cause
    ? String((cause as Record<string, unknown>)[field])
    : undefined

/** A connection tried on several addresses fails with an AggregateError whose own code may be missing. */
const codeOf = (cause: unknown): string | undefined =>
  fieldOf(cause, "code") ?? (cause instanceof AggregateError ? codeOf(cause.errors[0]) : undefined)

/**
 * What the operator should read when connecting to `databaseUrl` fails with `cause` (a socket
 * error, or the server's refusal with its SQLSTATE). Never quotes the URL's password.
 */
export const describeDatabaseFailure = (cause: unknown, databaseUrl: string): string => {
  const url = new URL(databaseUrl)
  const where = `PostgreSQL at ${url.hostname || "localhost"}:${url.port || "5432"}`
  const user = decodeURIComponent(url.username) || "the current user"
  const database = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username)
  const message = fieldOf(cause, "message") ?? String(cause)
  const told = url.password === "" ? message : message.split(decodeURIComponent(url.password)).join("****")
  switch (codeOf(cause)) {
    case "ECONNREFUSED":
      return `${where} refused the connection: is it running and listening on that address? (DATABASE_URL)`
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
      return `the DATABASE_URL host ${url.hostname} is unknown: it does not resolve to an address`
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${where} cannot be reached (${codeOf(cause)}): check the host in DATABASE_URL and the network`
    case "3D000":
      return `database "${database}" does not exist on ${where}: create it (createdb ${database}) or fix DATABASE_URL`
    case "28P01":
      return `${where} refused the password of user "${user}" (authentication failed): check DATABASE_URL`
    case "28000":
      return `${where} refused user "${user}": ${told}`
  }
  if (/timed out|timeout exceeded/i.test(message)) {
    return `${where} did not answer in time: check the host and port in DATABASE_URL`
  }
  if (/password must be a string/i.test(message)) {
    return `${where} asks user "${user}" for a password and DATABASE_URL has none`
  }
  return `cannot connect to ${where}: ${told}`
}
