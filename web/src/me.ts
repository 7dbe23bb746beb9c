import { useSyncExternalStore } from "react"
import { api, type Schemas } from "./api/client.ts"
import { ok } from "./api/problems.ts"
import { session } from "./session.ts"
import { type Loaded, useLoad } from "./useLoad.ts"

export type Me = Schemas["MeResponse"]
export type Role = Me["role"]

const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

/** Whether `role` is at least `minimum` (README "Roles and members"). */
export const atLeast = (role: Role, minimum: Role) => rank[role] >= rank[minimum]

/** Who is signed in, their organization's name and their role there, read once per session. */
export const useMe = (): Loaded<Me> => {
  const token = useSyncExternalStore(session.subscribe, () => session.current()?.token)
  // Signed out there is no one to ask about (the sign-in page shows instead).
  const [me] = useLoad(
    () => (token ? ok(api.GET("/api/v1/auth/me")) : Promise.reject(new Error("Not signed in"))),
    [token]
  )
  return me
}
