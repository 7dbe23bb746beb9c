/**
 * Large request bodies against a real server process on 127.0.0.1: a 1 GiB body (generated as it
 * is sent, never held) to login, signup, a JSON endpoint, a carrier callback and the signed upload
 * endpoint, once with its Content-Length declared and once chunked. Prints how the server
 * answered, how much of the body it took before answering, and its peak RSS meanwhile (sampled
 * from /proc every 10 ms).
 *
 *   npx tsx bench/largeBodies.ts                 # embedded PGlite
 *   DATABASE_URL=postgres://… npx tsx bench/largeBodies.ts
 *   BENCH_BODY_MIB=4096 npx tsx bench/largeBodies.ts
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"

const MiB = 1024 * 1024
const BODY_BYTES = Number(process.env.BENCH_BODY_MIB ?? 1024) * MiB
const admin = { email: "bench@example.test", password: "bench-password-1" }

const rssMiB = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

/** Peak RSS of `pid` while `work` runs. */
const peakRssDuring = async <A>(pid: number, work: () => Promise<A>) => {
  let peak = rssMiB(pid)
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 10)
  try {
    const result = await work()
    peak = Math.max(peak, rssMiB(pid))
    return { result, peak }
  } finally {
    clearInterval(sampler)
  }
}

interface Outcome {
  readonly answer: string
  readonly sentMiB: number
  readonly ms: number
}

/** Streams `BODY_BYTES` of filler as fast as the server reads it; stops at its answer or when it cuts the connection. */
const sendBody = (url: URL, method: string, headers: Record<string, string>, chunked: boolean) =>
  new Promise<Outcome>((resolve) => {
    const started = performance.now()
    let sent = 0
    let done = false
    const chunk = Buffer.alloc(256 * 1024, 0x61)
    const request = http.request(url, {
      method,
      headers: {
        ...headers,
        ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(BODY_BYTES) })
      }
    })
    const finish = (answer: string) => {
      if (done) return
      done = true
      request.destroy()
      resolve({ answer, sentMiB: sent / MiB, ms: performance.now() - started })
    }
    request.on("response", (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (text) => (body += text))
      response.on("end", () => finish(`${response.statusCode} ${body.slice(0, 90)}`))
      response.on("error", () => finish(`${response.statusCode} (body cut)`))
    })
    request.on("error", (error: NodeJS.ErrnoException) => finish(`connection ${error.code ?? error.message}`))
    const pump = () => {
      while (!done && sent < BODY_BYTES) {
        const piece = BODY_BYTES - sent >= chunk.length ? chunk : chunk.subarray(0, BODY_BYTES - sent)
        sent += piece.length
        if (!request.write(piece)) return void request.once("drain", pump)
      }
      if (!done) request.end()
    }
    pump()
  })

const json = async (url: string, init: RequestInit) => {
  const response = await fetch(url, init)
  return { status: response.status, body: (await response.json()) as any }
}

const main = async () => {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-bodies-"))
  const port = String(await freePort())
  const base = `http://127.0.0.1:${port}`
  const databaseUrl = process.env.DATABASE_URL
  const proc = spawnTalkgraph(["serve"], {
    PORT: port,
    TALKGRAPH_DATA_DIR: dataDir,
    TALKGRAPH_SIGNUP: "true",
    TALKGRAPH_ADMIN_EMAIL: admin.email,
    TALKGRAPH_ADMIN_PASSWORD: admin.password,
    ...(databaseUrl
      ? { DATABASE_URL: databaseUrl, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123" }
      : {})
  })
  try {
    await waitUntilServing(proc, base, 120_000)
    const pid = proc.child.pid!
    // Its own user: on a PostgreSQL that already has users no admin is bootstrapped.
    const { body: signup } = await json(`${base}/api/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: `bench-${Date.now()}@example.test`, password: admin.password })
    })
    const bearer = { authorization: `Bearer ${signup.token}` }
    const { body: grant } = await json(`${base}/api/v1/s3/presigned-upload-url`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer },
      body: "{}"
    })
    const jsonType = { "content-type": "application/json" }
    const targets: ReadonlyArray<{ name: string; method: string; url: URL; headers: Record<string, string> }> = [
      { name: "login", method: "POST", url: new URL("/api/v1/auth/login", base), headers: jsonType },
      { name: "signup", method: "POST", url: new URL("/api/v1/auth/signup", base), headers: jsonType },
      {
        name: "JSON endpoint (create API key)",
        method: "POST",
        url: new URL("/api/v1/user/api-keys", base),
        headers: { ...jsonType, ...bearer }
      },
      {
        name: "carrier callback (Twilio status)",
        method: "POST",
        url: new URL("/api/v1/telephony/twilio/status/1", base),
        headers: { "content-type": "application/x-www-form-urlencoded" }
      },
      {
        name: `signed upload (${(grant.max_size_bytes / MiB).toFixed(0)} MiB cap)`,
        method: "PUT",
        url: new URL(grant.upload_url),
        headers: { "content-type": "text/csv" }
      }
    ]
    const idle = rssMiB(pid)
    console.log(
      `server pid ${pid}, ${databaseUrl ? "PostgreSQL" : "embedded PGlite"}, RSS at rest ${idle.toFixed(0)} MiB`
    )
    console.log(`each body: ${BODY_BYTES / MiB} MiB of filler, streamed\n`)
    let overallPeak = idle
    for (const target of targets) {
      for (const chunked of [false, true]) {
        const { result, peak } = await peakRssDuring(
          pid,
          () => sendBody(target.url, target.method, target.headers, chunked)
        )
        overallPeak = Math.max(overallPeak, peak)
        console.log(
          `${target.name.padEnd(34)} ${(chunked ? "chunked" : "Content-Length").padEnd(15)} ` +
            `sent ${result.sentMiB.toFixed(1).padStart(7)} MiB in ${result.ms.toFixed(0).padStart(5)} ms, ` +
            `peak RSS ${peak.toFixed(0)} MiB: ${result.answer}`
        )
      }
    }
    const health = await fetch(`${base}/api/v1/health`)
    console.log(
      `\npeak RSS over all sends ${overallPeak.toFixed(0)} MiB (at rest ${
        idle.toFixed(0)
      } MiB); health afterwards: ${health.status}`
    )
  } finally {
    await stop(proc)
    await fsp.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
