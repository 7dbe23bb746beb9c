import { type FormEvent, useState } from "react"
import { api } from "../api/client.ts"
import { messageOf, ok } from "../api/problems.ts"
import { session } from "../session.ts"

/** Email and password for a session token; explains where the first account comes from. */
export const SignInPage = () => {
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [problem, setProblem] = useState<string>()
  const [busy, setBusy] = useState(false)
  const expired = session.lastEnd() === "expired"

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setProblem(undefined)
    try {
      session.begin(await ok(api.POST("/api/v1/auth/login", { body: { email, password } })))
    } catch (error) {
      setProblem(messageOf(error))
      setBusy(false)
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to talkgraph</h1>
      {expired && <p className="notice" role="status">Your session expired. Sign in again to continue.</p>}
      <form onSubmit={submit} aria-describedby={problem ? "sign-in-problem" : undefined}>
        <label>
          Email
          <input
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {problem && <p id="sign-in-problem" className="problem" role="alert">{problem}</p>}
        <button type="submit" disabled={busy}>{busy ? "Signing in…" : "Sign in"}</button>
      </form>
      <section className="first-start" aria-labelledby="first-start">
        <h2 id="first-start">First time here?</h2>
        <p>
          The first start of the server creates an administrator, <code>admin@talkgraph.local</code> unless{" "}
          <code>TALKGRAPH_ADMIN_EMAIL</code>{" "}
          was set, and prints its generated password once in the server's output (or uses{" "}
          <code>TALKGRAPH_ADMIN_PASSWORD</code>). More users:{" "}
          <code>talkgraph user create</code>, or the members page once signed in.
        </p>
      </section>
    </main>
  )
}
