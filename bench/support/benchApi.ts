/** A JSON request to a benchmarked server; the body parsed when there is one. */
export const call = async (
  base: string,
  method: string,
  route: string,
  headers: Record<string, string>,
  body?: unknown
): Promise<{ readonly status: number; readonly body: any }> => {
  const response = await fetch(new URL(route, base), {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

/** The admin's API key headers on a fresh server: log in, make a key. */
export const adminKeyHeaders = async (base: string, admin: { readonly email: string; readonly password: string }) => {
  const login = await call(base, "POST", "/api/v1/auth/login", {}, admin)
  if (login.status !== 200) throw new Error(`login refused: ${login.status} ${JSON.stringify(login.body)}`)
  const session = { authorization: `Bearer ${login.body.token}` }
  const key = (await call(base, "POST", "/api/v1/user/api-keys", session, { name: "bench" })).body.api_key as string
  return { "x-api-key": key }
}
