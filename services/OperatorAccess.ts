import { Context } from "effect"

/**
 * The operator's way into a running server on the embedded database, whose data dir no other
 * process may open: a random token, made at start and written (owner-only) into the data dir
 * beside the database, for `talkgraph user create` to send. Whoever can read the data dir can
 * read the database itself, so the token gives nothing more than that already does.
 */
export interface OperatorAccessShape {
  readonly token: string
  /** Whether `presented` is this process's token (compared in constant time). */
  readonly admits: (presented: string) => boolean
}

export class OperatorAccess extends Context.Tag("talkgraph/OperatorAccess")<OperatorAccess, OperatorAccessShape>() {}
