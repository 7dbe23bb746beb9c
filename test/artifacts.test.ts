import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SecretBox } from "../services/SecretBox.ts"
import { Storage } from "../services/Storage.ts"
import { monoPcm16Wav } from "../src/audio/pcmWav.ts"
import { artifactLinkMessage, artifactPath } from "../src/usage/artifactLinks.ts"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { insertRuns, insertWorkflow } from "./support/runRows.ts"
import { type LocalS3, startS3 } from "./support/s3.ts"
import { type RunningServer, startServer } from "./support/server.ts"

const recordingBytes = monoPcm16Wav([Int16Array.from({ length: 4000 }, (_, i) => (i * 37) % 20000 - 10000)], 8000)
const transcriptText = JSON.stringify({ run_id: 0, transcript: [{ role: "assistant", content: "Hello!" }] })

interface SeededRun {
  readonly id: number
  readonly recordingUrl: string
  readonly transcriptUrl: string
  readonly recordingKey: string
}

/** A finished call of `account` with its recording and transcript stored, and its links from the usage report. */
const seedRun = async (server: RunningServer, api: Client, account: TestAccount): Promise<SeededRun> => {
  const folder = `calls/${account.organizationId}/${crypto.randomUUID()}`
  await server.run(Effect.flatMap(Storage, (storage) =>
    Effect.all([
      storage.write(`${folder}/recording.wav`, recordingBytes, "audio/wav"),
      storage.write(`${folder}/transcript.json`, transcriptText, "application/json")
    ])))
  const workflowId = await insertWorkflow(server, account.organizationId)
  const [id] = await insertRuns(server, account.organizationId, [
    { workflowId, recordingKey: `${folder}/recording.wav`, transcriptKey: `${folder}/transcript.json` }
  ])
  const report = await api.get(
    `/api/v1/organizations/usage/runs?start_date=2024-05-01&end_date=2024-05-31`,
    { token: account.token }
  )
  const run = report.body.runs.find((row: { id: number }) => row.id === id)
  return {
    id: id!,
    recordingUrl: run.recording_url,
    transcriptUrl: run.transcript_url,
    recordingKey: `${folder}/recording.wav`
  }
}

/** A link the server itself signed, for a run and expiry of the test's choosing. */
const signedLink = (server: RunningServer, runId: number, kind: string, expires: number) =>
  server.run(Effect.map(SecretBox, (box) => {
    const path = artifactPath(runId, kind)
    return `${server.url}${path}?expires=${expires}&sig=${
      encodeURIComponent(box.sign("artifact", artifactLinkMessage(path, expires)))
    }`
  }))

/** When a SigV4 presigned link was signed, from its `X-Amz-Date` (`20261128T102243Z`). */
const signedAt = (link: string) => {
  const stamp = new URL(link).searchParams.get("X-Amz-Date")!
  return Date.parse(stamp.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"))
}

const bytesOf = async (reply: Response) => new Uint8Array(await reply.arrayBuffer())

describe("recording and transcript links on local storage", () => {
  let server: RunningServer
  let api: Client
  let account: TestAccount
  let run: SeededRun

  beforeAll(async () => {
    server = await startServer({ PUBLIC_URL: "http://127.0.0.1:1" })
    api = client(server.url)
    account = await newAccount(api)
    run = await seedRun(server, api, account)
  })
  afterAll(() => server?.close())

  /** The report's links point at PUBLIC_URL; the test reaches the same path on the server. */
  const local = (url: string) => `${server.url}${new URL(url).pathname}${new URL(url).search}`

  it("serves the recording as audio/wav with its length, ranges announced and a file name", async () => {
    const reply = await fetch(local(run.recordingUrl))
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toBe("audio/wav")
    expect(reply.headers.get("content-length")).toBe(String(recordingBytes.length))
    expect(reply.headers.get("accept-ranges")).toBe("bytes")
    expect(reply.headers.get("content-disposition")).toBe(`attachment; filename="run-${run.id}-recording.wav"`)
    expect(await bytesOf(reply)).toEqual(recordingBytes)
  })

  it("serves the transcript as application/json", async () => {
    const reply = await fetch(local(run.transcriptUrl))
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toBe("application/json")
    expect(reply.headers.get("content-disposition")).toBe(`attachment; filename="run-${run.id}-transcript.json"`)
    expect(await reply.text()).toBe(transcriptText)
  })

  it("serves byte ranges with 206 and Content-Range, and 416 for a range past the end", async () => {
    const size = recordingBytes.length
    const first = await fetch(local(run.recordingUrl), { headers: { range: "bytes=0-99" } })
    expect(first.status).toBe(206)
    expect(first.headers.get("content-range")).toBe(`bytes 0-99/${size}`)
    expect(first.headers.get("content-length")).toBe("100")
    expect(await bytesOf(first)).toEqual(recordingBytes.slice(0, 100))

    const middle = await fetch(local(run.recordingUrl), { headers: { range: "bytes=4000-" } })
    expect(middle.status).toBe(206)
    expect(middle.headers.get("content-range")).toBe(`bytes 4000-${size - 1}/${size}`)
    expect(await bytesOf(middle)).toEqual(recordingBytes.slice(4000))

    const tail = await fetch(local(run.recordingUrl), { headers: { range: "bytes=-44" } })
    expect(tail.status).toBe(206)
    expect(await bytesOf(tail)).toEqual(recordingBytes.slice(size - 44))

    const past = await fetch(local(run.recordingUrl), { headers: { range: `bytes=${size}-` } })
    expect(past.status).toBe(416)
    expect(past.headers.get("content-range")).toBe(`bytes */${size}`)
    expect(await past.json()).toEqual({ detail: `The range is outside the file (${size} bytes)` })
  })

  it("answers HEAD with the headers alone", async () => {
    const reply = await fetch(local(run.recordingUrl), { method: "HEAD" })
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-length")).toBe(String(recordingBytes.length))
    expect(reply.headers.get("content-type")).toBe("audio/wav")
  })

  it("refuses a tampered or expired link with 403, saying nothing about the run", async () => {
    const url = new URL(local(run.recordingUrl))
    const otherRun = new URL(url)
    otherRun.pathname = artifactPath(run.id + 1, "recording")
    const otherKind = new URL(url)
    otherKind.pathname = artifactPath(run.id, "transcript")
    const laterExpiry = new URL(url)
    laterExpiry.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600))
    const badSignature = new URL(url)
    badSignature.searchParams.set("sig", `${url.searchParams.get("sig")!.slice(0, -2)}AA`)
    const unsigned = new URL(url)
    unsigned.searchParams.delete("sig")
    const noRun = new URL(url)
    noRun.pathname = artifactPath(999_999_999, "recording")
    const paddedId = new URL(url)
    paddedId.pathname = `/api/v1/artifacts/0${run.id}/recording`
    for (const tampered of [otherRun, otherKind, laterExpiry, badSignature, unsigned, noRun, paddedId]) {
      const reply = await fetch(tampered)
      expect(reply.status, tampered.toString()).toBe(403)
      expect(await reply.json()).toEqual({ detail: "This link is not valid; take a new one from the usage report" })
    }
    const expired = await fetch(await signedLink(server, run.id, "recording", Math.floor(Date.now() / 1000) - 1))
    expect(expired.status).toBe(403)
    expect(await expired.json()).toEqual({ detail: "This link has expired; take a new one from the usage report" })
  })

  it("never serves another organization's run, and answers 404 for a run or artifact that is not there", async () => {
    const intruder = await newAccount(api, "intruder")
    const theirs = await seedRun(server, api, intruder)
    const mine = new URL(local(run.recordingUrl))
    const swapped = new URL(local(theirs.recordingUrl))
    swapped.pathname = mine.pathname
    expect((await fetch(swapped)).status).toBe(403)

    const farFuture = Math.floor(Date.now() / 1000) + 600
    expect((await fetch(await signedLink(server, 999_999_999, "recording", farFuture))).status).toBe(404)
    const [bare] = await insertRuns(server, account.organizationId, [{
      workflowId: await insertWorkflow(server, account.organizationId)
    }])
    expect((await fetch(await signedLink(server, bare!, "recording", farFuture))).status).toBe(404)
    // A run row naming another organization's file is still not served.
    const [pointing] = await insertRuns(server, account.organizationId, [
      { workflowId: await insertWorkflow(server, account.organizationId), recordingKey: theirs.recordingKey }
    ])
    expect((await fetch(await signedLink(server, pointing!, "recording", farFuture))).status).toBe(404)
  })
})

describe("recording and transcript links on S3 storage (s3rver on loopback)", () => {
  let s3: LocalS3
  let server: RunningServer
  let api: Client
  let run: SeededRun

  beforeAll(async () => {
    s3 = await startS3()
    server = await startServer(s3.env)
    api = client(server.url)
    run = await seedRun(server, api, await newAccount(api))
  })
  afterAll(async () => {
    await server?.close()
    await s3?.close()
  })

  const local = (url: string) => `${server.url}${new URL(url).pathname}${new URL(url).search}`

  it("redirects to a short-lived presigned URL of the object, which serves it with its type and file name", async () => {
    const reply = await fetch(local(run.recordingUrl), { redirect: "manual" })
    expect(reply.status).toBe(302)
    const location = new URL(reply.headers.get("location")!)
    expect(location.origin).toBe(s3.endpoint)
    expect(location.searchParams.get("X-Amz-Expires")).toBe("60")
    expect(location.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/)

    const object = await fetch(location)
    expect(object.status).toBe(200)
    expect(object.headers.get("content-type")).toBe("audio/wav")
    expect(object.headers.get("content-disposition")).toBe(`attachment; filename="run-${run.id}-recording.wav"`)
    expect(await bytesOf(object)).toEqual(recordingBytes)

    const transcript = await fetch(local(run.transcriptUrl))
    expect(transcript.headers.get("content-type")).toBe("application/json")
    expect(await transcript.text()).toBe(transcriptText)
  })

  it("serves a range through the redirect", async () => {
    const reply = await fetch(local(run.recordingUrl), { headers: { range: "bytes=100-199" } })
    expect(reply.status).toBe(206)
    expect(reply.headers.get("content-range")).toBe(`bytes 100-199/${recordingBytes.length}`)
    expect(await bytesOf(reply)).toEqual(recordingBytes.slice(100, 200))
  })

  it("refuses a tampered link with 403 before redirecting anywhere", async () => {
    const tampered = new URL(local(run.recordingUrl))
    tampered.pathname = artifactPath(run.id + 1, "recording")
    const reply = await fetch(tampered, { redirect: "manual" })
    expect(reply.status).toBe(403)
    expect(reply.headers.get("location")).toBeNull()
  })

  it("hands out a URL the store refuses once it has expired", async () => {
    const url = await server.run(
      Effect.flatMap(
        Storage,
        (storage) =>
          storage.presignDownload(run.recordingKey, {
            contentType: "audio/wav",
            fileName: "x.wav",
            expiresInSeconds: 3
          })
      )
    )
    expect(url._tag).toBe("Some")
    const location = (url as { value: string }).value
    expect((await fetch(location)).status).toBe(200)
    // X-Amz-Date has whole seconds, so the link expires 3 s after the second it was signed in,
    // which can be under 3 s from now; wait for that moment rather than a fixed time.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, signedAt(location) + 3000 + 1100 - Date.now())))
    const reply = await fetch(location)
    expect(reply.status).toBe(403)
    expect(await reply.text()).toMatch(/Request has expired/)
  })

  it("does not let the presigned URL be changed to another object", async () => {
    const reply = await fetch(local(run.recordingUrl), { redirect: "manual" })
    const location = new URL(reply.headers.get("location")!)
    location.pathname = location.pathname.replace(/recording\.wav$/, "transcript.json")
    expect((await fetch(location)).status).toBe(403)
  })
})
