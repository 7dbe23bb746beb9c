import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Role } from "../../../src/domain/roles.ts"
import { EmptyObject, Timestamp } from "../../../src/domain/wireTypes.ts"
import { NewEmail, NewPassword } from "../../../src/identity/credentials.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpTooManyRequests, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

export const AddMemberRequest = bodySchema("AddMember", {
  email: NewEmail,
  password: NewPassword.annotations({ description: "The new member's first password, for you to pass on to them" }),
  name: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(200)), { default: () => "" }),
  role: Schema.optionalWith(Role, { default: () => "member" as const })
})

export const ChangeRoleRequest = bodySchema("ChangeMemberRole", { role: Role })

export const MemberResponse = Schema.Struct({
  user_id: Schema.Int,
  email: Schema.String,
  name: Schema.String,
  role: Role,
  joined_at: Timestamp
}).annotations({ identifier: "MemberResponse" })

const MemberPath = pathSchema("Member", { user_id: IdFromPath })

/**
 * The caller's organization's members. Everyone may list them; adding, changing roles and
 * removing follow the role rules (README "Roles"). Needs a session token, as managing keys does.
 */
export const MembersApi = HttpApiGroup.make("members")
  .annotate(
    OpenApi.Description,
    "The people in your organization and their roles (owner, admin, member). Needs a session token."
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .addSuccess(Schema.Array(MemberResponse))
      .annotate(OpenApi.Summary, "List members")
      .annotate(OpenApi.Description, "Everyone in your organization with their role, in the order they joined.")
  )
  .add(
    HttpApiEndpoint.post("add", "/")
      .setPayload(AddMemberRequest)
      .addSuccess(MemberResponse)
      .addError(HttpConflict)
      .addError(HttpTooManyRequests)
      .annotate(OpenApi.Summary, "Add a member")
      .annotate(
        OpenApi.Description,
        "Creates the member's account with the password you choose for them. Admins add members and admins; only an owner adds owners."
      )
  )
  .add(
    HttpApiEndpoint.put("changeRole", "/:user_id")
      .setPath(MemberPath)
      .setPayload(ChangeRoleRequest)
      .addSuccess(MemberResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .annotate(OpenApi.Summary, "Change a member's role")
      .annotate(
        OpenApi.Description,
        "Admins move members between member and admin; only an owner makes owners or changes an owner. The last owner cannot be demoted (409)."
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/:user_id")
      .setPath(MemberPath)
      .addSuccess(EmptyObject)
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .annotate(OpenApi.Summary, "Remove a member")
      .annotate(
        OpenApi.Description,
        "Revokes the member's sessions and API keys here at once; anyone may remove themselves. The last owner cannot be removed (409)."
      )
  )
  .addError(HttpForbidden)
  .addError(HttpValidationFailed)
  .middleware(V1Auth)
  .prefix("/api/v1/organizations/members")
