import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { client } from "./support/client.ts"
import { databaseKind, postgresUrl } from "./support/database.ts"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "./support/process.ts"
import { startServer, TEST_ADMIN, uniqueEmail } from "./support/server.ts"

const dirs: Array<string> = []
afterAll(async () => {
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
})

/** A fresh embedded data dir, or (when the suite runs on PostgreSQL) the suite's database. */
const environment = async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-cli-"))
  dirs.push(dataDir)
  const database = postgresUrl()
  return {
    TALKGRAPH_DATA_DIR: dataDir,
    PORT: String(await freePort()),
    TALKGRAPH_SIGNUP: "true",
    // On the suite's shared database the first server to start creates the admin the other suites sign in as.
    TALKGRAPH_ADMIN_EMAIL: TEST_ADMIN.email,
    TALKGRAPH_ADMIN_PASSWORD: TEST_ADMIN.password,
    ...(database ? { DATABASE_URL: database, TALKGRAPH_SECRET_KEY: "cli-test-secret-key-cli-test-secret-key-01" } : {})
  }
}

const userCreate = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const proc = spawnTalkgraph(["user", "create", ...args], env)
  const code = await proc.exited
  return { code, output: proc.output().trim() }
}

describe("talkgraph user create", () => {
  it("refuses a bad email and a one-character password in one line naming both, creating nothing", async () => {
    const env = await environment()
    const result = await userCreate(["--email", "not-an-email", "--password", "x"], env)
    expect(result.code).toBe(1)
    expect(result.output).toBe(
      "talkgraph: --email: Not a valid email address; --password: the password must be at least 8 characters"
    )
  }, 120_000)

  it("refuses a commonly used password, an unknown option and a bad role, each in a clear line", async () => {
    const env = await environment()
    const common = await userCreate(["--email", uniqueEmail(), "--password", "password123"], env)
    expect(common.output).toBe(
      "talkgraph: --password: the password is one of the most commonly used passwords; choose another"
    )
    const unknown = await userCreate(["--email", uniqueEmail(), "--password", "fine-password-1", "--admin"], env)
    expect(unknown.code).toBe(1)
    expect(unknown.output).toMatch(/^talkgraph: Unknown option '--admin'/)
    const role = await userCreate(["--email", uniqueEmail(), "--password", "fine-password-1", "--role", "root"], env)
    expect(role.output).toBe("talkgraph: --role must be owner, admin or member")
  }, 120_000)

  it("names an unknown organization in one line, without a stack trace", async () => {
    const env = await environment()
    const result = await userCreate([
      "--email",
      uniqueEmail(),
      "--password",
      "fine-password-1",
      "--organization-id",
      "987654321"
    ], env)
    expect(result.code).toBe(1)
    expect(result.output).toBe("talkgraph: Organization 987654321 not found")
  }, 120_000)

  it(
    "works while the server runs: the user can sign in at once, joins an organization with a role, and a duplicate is refused",
    async () => {
      const env = await environment()
      const url = `http://127.0.0.1:${env.PORT}`
      const api = client(url)
      const server = spawnTalkgraph(["serve"], env)
      try {
        await waitUntilServing(server, url)
        const login = await api.post("/api/v1/auth/signup", {
          email: uniqueEmail("owner"),
          password: "owner-password-1"
        })
        const organizationId = login.body.user.organization_id as number

        const email = uniqueEmail("cli")
        const created = await userCreate(
          [
            "--email",
            email,
            "--password",
            "cli-password-123",
            "--name",
            "Cli",
            "--organization-id",
            String(organizationId),
            "--role",
            "admin"
          ],
          env
        )
        expect(created.output).toMatch(
          new RegExp(`^Created user ${email} \\(id \\d+\\) in organization ${organizationId}\\.$`)
        )
        expect(created.code).toBe(0)

        const signedIn = await api.post("/api/v1/auth/login", { email, password: "cli-password-123" })
        expect(signedIn.status).toBe(200)
        const members = (await api.get("/api/v1/organizations/members", { token: login.body.token })).body
        expect(members.find((member: any) => member.email === email)).toMatchObject({ role: "admin", name: "Cli" })

        const again = await userCreate(["--email", email.toUpperCase(), "--password", "cli-password-123"], env)
        expect(again.code).toBe(1)
        expect(again.output).toBe("talkgraph: A user with this email already exists")

        const elsewhere = await userCreate(["--email", uniqueEmail("own"), "--password", "cli-password-123"], env)
        expect(elsewhere.output).toMatch(/^Created user .* in organization (\d+)\.$/)
        expect(Number(/organization (\d+)/.exec(elsewhere.output)![1])).not.toBe(organizationId)
      } finally {
        await stop(server)
      }
      // Once the server has stopped, the command opens the database itself.
      const after = await userCreate(["--email", uniqueEmail("after"), "--password", "cli-password-123"], env)
      expect(after.code, after.output).toBe(0)
    },
    180_000
  )
})

describe.runIf(databaseKind() === "pglite")("the running server's operator endpoint", () => {
  it("is published owner-only in the data dir and answers only its own token, as if it did not exist otherwise", async () => {
    const server = await startServer()
    try {
      const file = path.join(server.dataDir, "talkgraph.operator.json")
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600)
      const endpoint = JSON.parse(await fs.readFile(file, "utf8"))
      expect(endpoint).toEqual({ pid: process.pid, url: server.url, token: expect.stringMatching(/^tgo_/) })

      const api = client(server.url)
      const body = { email: uniqueEmail("op"), password: "operator-password-1" }
      for (
        const headers of [{}, { "x-talkgraph-operator": "tgo_guess" }, { "x-talkgraph-operator": `${endpoint.token}x` }]
      ) {
        const refused = await api.post("/api/v1/operator/users", body, { headers })
        expect(refused.status).toBe(404)
        expect(refused.body).toEqual({ detail: "Not Found" })
      }
      const bad = await api.post("/api/v1/operator/users", { email: "nope", password: "x" }, {
        headers: { "x-talkgraph-operator": endpoint.token }
      })
      expect(bad.status).toBe(422)
      const created = await api.post("/api/v1/operator/users", body, {
        headers: { "x-talkgraph-operator": endpoint.token }
      })
      expect(created.status).toBe(200)
      expect((await api.post("/api/v1/auth/login", body)).status).toBe(200)
    } finally {
      await server.close()
    }
  })
})
