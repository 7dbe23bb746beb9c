import createClient from "openapi-fetch"
import { session } from "../session.ts"
import type { components, paths } from "./schema.ts"

export type Schemas = components["schemas"]

/**
 * The typed API client: every path, parameter and body comes from the server's OpenAPI document
 * (schema.ts). The session's token rides on every request, and a 401 ends the session, which
 * brings the sign-in page back.
 */
export const api = createClient<paths>({ baseUrl: "" })

api.use({
  onRequest({ request }) {
    const token = session.current()?.token
    if (token && !request.headers.has("authorization")) request.headers.set("authorization", `Bearer ${token}`)
    return request
  },
  onResponse({ response }) {
    if (response.status === 401 && session.current()) session.end("expired")
    return response
  }
})
