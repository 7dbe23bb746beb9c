import { Schema } from "effect"

/**
 * A member's role in an organization. Every role does the organization's work (agents, chats,
 * calls, campaigns, recordings, usage); an admin also changes its settings (model and telephony
 * configurations), manages other members' API keys and manages members; an owner also makes
 * owners and changes or removes them. An organization always keeps at least one owner.
 */
export const Role = Schema.Literal("owner", "admin", "member")
export type Role = typeof Role.Type

const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

export const atLeast = (role: Role, minimum: Role): boolean => rank[role] >= rank[minimum]

/** Who acts, with their role as it is now. */
export interface Actor {
  readonly userId: number
  readonly role: Role
}

interface Member {
  readonly userId: number
  readonly role: Role
}

/** Why an action is refused: not the actor's to do (`forbidden`), or not possible as things are (`conflict`). */
export interface Refusal {
  readonly kind: "forbidden" | "conflict"
  readonly message: string
}

const forbidden = (message: string): Refusal => ({ kind: "forbidden", message })
const lastOwner = (action: string): Refusal => ({
  kind: "conflict",
  message: `The last owner of an organization cannot be ${action}; make another member owner first`
})

/** The refusal of an action that needs at least `minimum`, or undefined when `actor` has it. */
export const roleRefusal = (actor: Actor, minimum: Role): Refusal | undefined =>
  atLeast(actor.role, minimum)
    ? undefined
    : forbidden(`This needs the ${minimum === "admin" ? "admin or owner" : minimum} role; you are a ${actor.role}`)

export const addMemberRefusal = (actor: Actor, role: Role): Refusal | undefined => {
  if (!atLeast(actor.role, "admin")) return forbidden("Only an owner or admin can add members")
  if (role === "owner" && actor.role !== "owner") return forbidden("Only an owner can make someone an owner")
  return undefined
}

/** `owners` counts the organization's owners now, `target` included when they are one. */
export const roleChangeRefusal = (actor: Actor, target: Member, to: Role, owners: number): Refusal | undefined => {
  if (!atLeast(actor.role, "admin")) return forbidden("Only an owner or admin can change roles")
  if ((to === "owner" || target.role === "owner") && actor.role !== "owner") {
    return forbidden("Only an owner can make someone an owner or change an owner's role")
  }
  if (target.role === "owner" && to !== "owner" && owners <= 1) return lastOwner("demoted")
  return undefined
}

/** Removing yourself is leaving the organization, open to every role but the last owner. */
export const removalRefusal = (actor: Actor, target: Member, owners: number): Refusal | undefined => {
  if (actor.userId !== target.userId && !atLeast(actor.role, "admin")) {
    return forbidden("Only an owner or admin can remove members")
  }
  if (target.role === "owner" && actor.role !== "owner") return forbidden("Only an owner can remove an owner")
  if (target.role === "owner" && owners <= 1) return lastOwner("removed")
  return undefined
}

/** Every member sees and manages their own API keys; admins and owners see every key. */
export const seesEveryKey = (actor: Actor): boolean => atLeast(actor.role, "admin")

interface KeyOwnership {
  readonly createdBy: number
  /** The creator's role now; null when they are no longer a member. */
  readonly creatorRole: Role | null
}

/** Revoking (or reactivating) a key: its creator, or an admin or owner ranking at least as high as the creator. */
export const keyManagementRefusal = (actor: Actor, key: KeyOwnership): Refusal | undefined => {
  if (actor.userId === key.createdBy) return undefined
  if (!atLeast(actor.role, "admin")) return forbidden("Only an owner or admin can manage another member's API keys")
  if (key.creatorRole !== null && !atLeast(actor.role, key.creatorRole)) {
    return forbidden("Only an owner can manage an owner's API keys")
  }
  return undefined
}

interface KeyRevocation extends KeyOwnership {
  /** Who revoked it; null when not recorded or no longer a user. */
  readonly revokedBy: number | null
  /** The revoker's role now; null when they are no longer a member. */
  readonly revokerRole: Role | null
}

/**
 * Reactivating takes what revoking took, and more when someone else revoked the key: a member
 * cannot undo an admin's revocation of their key, nor an admin an owner's.
 */
export const reactivationRefusal = (actor: Actor, key: KeyRevocation): Refusal | undefined => {
  const management = keyManagementRefusal(actor, key)
  if (management || key.revokedBy === actor.userId) return management
  if (!atLeast(actor.role, "admin")) {
    return forbidden("This API key was revoked by someone else; only an owner or admin can reactivate it")
  }
  if (key.revokerRole !== null && !atLeast(actor.role, key.revokerRole)) {
    return forbidden("This API key was revoked by an owner; only an owner can reactivate it")
  }
  return undefined
}
