import * as fs from "node:fs/promises"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { consoleBuildDir } from "../http/consoleBuildDir.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let asset: string

beforeAll(async () => {
  const assets = await fs.readdir(path.join(consoleBuildDir(), "assets"))
  asset = assets.find((name) => name.endsWith(".js"))!
  server = await startServer()
})
afterAll(async () => {
  await server?.close()
})

describe("the console served at /", () => {
  it("answers / and any client-side route with index.html, never cached", async () => {
    for (const route of ["/", "/agents", "/agents/42", "/runs?page=2"]) {
      const response = await fetch(`${server.url}${route}`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/html")
      expect(response.headers.get("cache-control")).toBe("no-cache")
      expect(await response.text()).toContain("<div id=\"root\"></div>")
    }
  })

  it("serves the hashed assets for a year, immutable, with their content type", async () => {
    const response = await fetch(`${server.url}/assets/${asset}`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/javascript")
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    const missing = await fetch(`${server.url}/assets/not-there.js`)
    expect(missing.status).toBe(404)
  })

  it("leaves the API's paths alone: unknown ones keep the API's 404, docs and the OpenAPI document answer as before", async () => {
    const unknown = await fetch(`${server.url}/api/v1/no-such-thing`)
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ detail: "Not Found" })
    const v2 = await fetch(`${server.url}/api/v2/no-such-thing`)
    expect(v2.status).toBe(404)
    expect(((await v2.json()) as { error: { code: string } }).error.code).toBe("not_found")
    expect((await fetch(`${server.url}/api/v1/health`)).status).toBe(200)
    expect((await fetch(`${server.url}/openapi.json`)).headers.get("content-type")).toContain("application/json")
    expect((await fetch(`${server.url}/docs`)).status).toBe(200)
  })

  it("never serves a file outside the build", async () => {
    for (const route of ["/assets/..%2F..%2Fpackage.json", "/..%2Fpackage.json", "/assets/%2e%2e/index.html"]) {
      const response = await fetch(`${server.url}${route}`)
      const text = await response.text()
      expect(text).not.toContain("\"name\": \"talkgraph\"")
    }
  })
})
