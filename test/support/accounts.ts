import type { Client } from "./client.ts"
import { uniqueEmail } from "./server.ts"

export interface TestAccount {
  readonly email: string
  readonly password: string
  readonly token: string
  readonly userId: number
  readonly organizationId: number
}

/** A new user in a new organization, signed in: every test owns its own tenant. */
export const newAccount = async (api: Client, label = "user"): Promise<TestAccount> => {
  const email = uniqueEmail(label)
  const password = "correct horse battery staple"
  const reply = await api.post("/api/v1/auth/signup", { email, password, name: label })
  if (reply.status !== 200) throw new Error(`signup failed: ${reply.status} ${JSON.stringify(reply.body)}`)
  return {
    email,
    password,
    token: reply.body.token,
    userId: reply.body.user.id,
    organizationId: reply.body.user.organization_id
  }
}

export const newApiKey = async (api: Client, account: TestAccount, scopes?: ReadonlyArray<string>): Promise<string> => {
  const reply = await api.post("/api/v1/user/api-keys", { name: "test key", ...(scopes ? { scopes } : {}) }, {
    token: account.token
  })
  if (reply.status !== 200) throw new Error(`api key creation failed: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body.api_key
}
