import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Members } from "../../../services/Members.ts"
import { Api } from "../../api.ts"
import { requireSession } from "../../security.ts"

const signedIn = requireSession("Managing members requires a session token from /api/v1/auth/login")

export const MembersHandlers = HttpApiBuilder.group(Api, "members", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members
    return handlers
      .handle("list", () => Effect.flatMap(signedIn, members.list))
      .handle("add", ({ payload }) => Effect.flatMap(signedIn, (principal) => members.add(principal, payload)))
      .handle("changeRole", ({ path, payload }) =>
        Effect.flatMap(signedIn, (principal) =>
          members.changeRole(principal, path.user_id, payload.role)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(signedIn, (principal) =>
          members.remove(principal, path.user_id)).pipe(Effect.as({})))
  }))
