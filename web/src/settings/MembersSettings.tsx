import { type FormEvent, useState } from "react"
import { api, type Schemas } from "../api/client.ts"
import { messageOf, ok } from "../api/problems.ts"
import { atLeast, type Me, type Role } from "../me.ts"
import { session } from "../session.ts"
import { useLoad } from "../useLoad.ts"
import { Field, Problem } from "./Field.tsx"
import { SettingsTable } from "./SettingsTable.tsx"
import { useAction } from "./useAction.ts"

type Member = Schemas["MemberResponse"]

const roles: ReadonlyArray<Role> = ["member", "admin", "owner"]

/** What the caller may do to `member` (README "Roles and members"); the API still decides, and says why. */
const allowed = (me: Me, member: Member) => {
  const mayManage = me.role === "owner" || (me.role === "admin" && member.role !== "owner")
  return {
    changeRole: mayManage,
    grants: (role: Role) => me.role === "owner" || (mayManage && role !== "owner"),
    remove: mayManage || member.user_id === me.id
  }
}

const AddMemberForm = ({ me, onAdded }: { readonly me: Me; readonly onAdded: () => void }) => {
  const [email, setEmail] = useState("")
  const [name, setName] = useState("")
  const [password, setPassword] = useState("")
  const [role, setRole] = useState<Role>("member")
  const [state, run] = useAction()
  const [added, setAdded] = useState<string>()
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setAdded(undefined)
    const member = await run(() =>
      ok(
        api.POST("/api/v1/organizations/members", { body: { email: email.trim(), name: name.trim(), password, role } })
      )
    )
    if (member) {
      setAdded(`${member.email} can sign in now with the password you chose; pass it on to them.`)
      setEmail("")
      setName("")
      setPassword("")
      setRole("member")
      onAdded()
    }
  }
  return (
    <form onSubmit={submit} className="card" aria-labelledby="add-member-title">
      <h3 id="add-member-title">Add a member</h3>
      <div className="form-grid">
        <Field
          label="Email"
          type="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          problem={state.fields.email}
        />
        <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} problem={state.fields.name} />
        <Field
          label="First password"
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          value={password}
          hint="At least 8 characters; they sign in with it."
          onChange={(e) => setPassword(e.target.value)}
          problem={state.fields.password}
        />
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {roles.map((option) => (
              <option key={option} value={option} disabled={option === "owner" && me.role !== "owner"}>{option}</option>
            ))}
          </select>
        </label>
      </div>
      <Problem message={state.problem} />
      {added && <p role="status" className="saved">{added}</p>}
      <div className="actions">
        <button type="submit" disabled={state.busy}>{state.busy ? "Adding…" : "Add member"}</button>
      </div>
    </form>
  )
}

/** The organization's people and their roles; what the caller's role allows is offered, the rest shown read-only. */
export const MembersSettings = ({ me }: { readonly me: Me }) => {
  const [members, reload] = useLoad(() => ok(api.GET("/api/v1/organizations/members")), [])
  const [problem, setProblem] = useState<string>()
  const [saved, setSaved] = useState<string>()
  const canManage = atLeast(me.role, "admin")

  const changeRole = async (member: Member, role: Role) => {
    setProblem(undefined)
    setSaved(undefined)
    try {
      const changed = await ok(api.PUT("/api/v1/organizations/members/{user_id}", {
        params: { path: { user_id: member.user_id } },
        body: { role }
      }))
      setSaved(`${changed.name || changed.email} is now ${changed.role}.`)
    } catch (error) {
      setProblem(messageOf(error))
    }
    reload()
  }

  const remove = async (member: Member) => {
    const leaving = member.user_id === me.id
    const question = leaving
      ? "Leave this organization? You will be signed out."
      : `Remove ${member.name || member.email}? Their sessions and API keys stop working at once.`
    if (!window.confirm(question)) return
    setProblem(undefined)
    setSaved(undefined)
    try {
      await ok(api.DELETE("/api/v1/organizations/members/{user_id}", { params: { path: { user_id: member.user_id } } }))
      if (leaving) session.end("signed-out")
      else reload()
    } catch (error) {
      setProblem(messageOf(error))
    }
  }

  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <p className="hint">
        Owners and admins change settings and manage members; members use agents, campaigns and conversations. You are
        {" "}
        <strong>{me.role}</strong>.
      </p>
      {canManage && <AddMemberForm me={me} onAdded={reload} />}
      <Problem message={problem} />
      {saved && <p role="status" className="saved">{saved}</p>}
      {members.state === "loading" && <p role="status">Loading members…</p>}
      {members.state === "failed" && <p className="problem" role="alert">{members.message}</p>}
      {members.state === "ready" && (
        <SettingsTable label={"Members"} columns={["Name", "Email", "Role", "Joined"]}>
          {members.value.map((member) => {
            const may = allowed(me, member)
            const who = member.name || member.email
            return (
              <tr key={member.user_id}>
                <td>
                  {who}
                  {member.user_id === me.id && <span className="badge">you</span>}
                </td>
                <td>{member.email}</td>
                <td>
                  {may.changeRole
                    ? (
                      <select
                        aria-label={`Role of ${who}`}
                        value={member.role}
                        onChange={(e) => changeRole(member, e.target.value as Role)}
                      >
                        {roles.map((role) => (
                          <option key={role} value={role} disabled={!may.grants(role)}>{role}</option>
                        ))}
                      </select>
                    )
                    : member.role}
                </td>
                <td>{new Date(member.joined_at).toLocaleDateString()}</td>
                <td>
                  {may.remove && (
                    <button type="button" className="danger" onClick={() => remove(member)}>
                      {member.user_id === me.id ? "Leave" : "Remove"} <span className="visually-hidden">{who}</span>
                    </button>
                  )}
                </td>
              </tr>
            )
          })}
        </SettingsTable>
      )}
    </section>
  )
}
