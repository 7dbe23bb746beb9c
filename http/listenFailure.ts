import { Schema } from "effect"

/** The service could not listen on HOST:PORT; the message says why, in the operator's terms. */
export class ListenFailed extends Schema.TaggedError<ListenFailed>()("ListenFailed", {
  message: Schema.String
}) {}

const codeOf = (cause: unknown) =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined

/** What the operator should read when binding `host`:`port` fails with `cause` (a Node socket error). */
export const describeListenFailure = (cause: unknown, host: string, port: number): string => {
  switch (codeOf(cause)) {
    case "EADDRINUSE":
      return `port ${port} on ${host} is already in use (another talkgraph, or another program): stop it or set PORT`
    case "EADDRNOTAVAIL":
      return `HOST ${host} is not an address of this machine: use 127.0.0.1, 0.0.0.0 (every interface) or one of its own addresses`
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
      return `HOST ${host} does not resolve to an address of this machine: use 127.0.0.1, 0.0.0.0 or one of its own addresses`
    case "EACCES":
    case "EPERM":
      return `port ${port} on ${host} needs privileges this process does not have: use a port above 1023`
    default:
      return `cannot listen on ${host}:${port}: ${cause instanceof Error ? cause.message : String(cause)}`
  }
}
