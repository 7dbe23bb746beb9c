import { ConfigProvider, Effect, Option } from "effect"
import { describe, expect, it } from "vitest"
import { AppConfigLive } from "../app/config.ts"
import { AppConfig } from "../services/AppConfig.ts"

const load = (env: Record<string, string>) =>
  Effect.runPromise(
    Effect.either(
      AppConfig.pipe(
        Effect.provide(AppConfigLive),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
      )
    )
  )

describe("configuration", () => {
  it("runs embedded on 127.0.0.1:8000 with storage under the data dir when nothing is set", async () => {
    const result = await load({})
    expect(result._tag).toBe("Right")
    if (result._tag !== "Right") return
    const config = result.right
    expect(config.port).toBe(8000)
    expect(config.host).toBe("127.0.0.1")
    expect(config.publicUrl).toBe("http://127.0.0.1:8000")
    expect(config.dataDir).toMatch(/\.talkgraph$/)
    expect(config.storageUrl).toBe(`file://${config.dataDir}/storage`)
    expect(Option.isNone(config.databaseUrl)).toBe(true)
    expect(config.signupOpen).toBe(false)
    expect(config.sessionTtlHours).toBe(24)
  })

  it("uses PostgreSQL and S3 when configured", async () => {
    const result = await load({
      DATABASE_URL: "postgresql://db.internal/talkgraph",
      TALKGRAPH_SECRET_KEY: "x".repeat(32),
      STORAGE_URL: "s3://recordings-bucket/prod",
      PUBLIC_URL: "https://voice.example.com/"
    })
    expect(result._tag).toBe("Right")
    if (result._tag !== "Right") return
    expect(Option.isSome(result.right.databaseUrl)).toBe(true)
    expect(result.right.storageUrl).toBe("s3://recordings-bucket/prod")
    expect(result.right.publicUrl).toBe("https://voice.example.com")
  })

  it.each([
    [{ PORT: "eighty" }, /PORT/],
    [{ PORT: "70000" }, /PORT/],
    [{ PUBLIC_URL: "not a url" }, /PUBLIC_URL.*absolute http\(s\) URL/],
    [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL must be a postgres/],
    [{ DATABASE_URL: "postgres://127.0.0.1/x" }, /TALKGRAPH_SECRET_KEY.*required with DATABASE_URL/],
    [{ TALKGRAPH_SECRET_KEY: "short" }, /TALKGRAPH_SECRET_KEY must be at least 32 characters/],
    [{ STORAGE_URL: "ftp://files" }, /STORAGE_URL.*file:\/\/\/absolute\/path or s3:\/\/bucket/],
    [{ TALKGRAPH_SIGNUP: "maybe" }, /TALKGRAPH_SIGNUP/],
    [{ TALKGRAPH_ADMIN_EMAIL: "nobody" }, /TALKGRAPH_ADMIN_EMAIL.*email/],
    [{ TALKGRAPH_ADMIN_PASSWORD: "short" }, /TALKGRAPH_ADMIN_PASSWORD must be at least 8/],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/]
  ])("refuses %j with a message naming the variable", async (env, message) => {
    const result = await load(env)
    expect(result._tag).toBe("Left")
    if (result._tag === "Left") expect(result.left.message).toMatch(message)
  })
})
