import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Recordings } from "../services/Recordings.ts"
import { Storage } from "../services/Storage.ts"
import { decodeWav } from "../src/audio/wav.ts"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { rawMuLaw, silentMp3, sine, wavFile } from "./support/audioClips.ts"
import { useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { type LocalS3, startS3 } from "./support/s3.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { uploadCsv } from "./support/uploads.ts"
import { runnableDefinition } from "./support/workflowGraphs.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

const LIMITS = { RECORDING_MAX_SECONDS: "3", RECORDING_MAX_BYTES: "200000" }
const BASE = "/api/v1/workflow-recordings"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer(LIMITS)
  api = client(server.url)
})
afterAll(() => server?.close())

const toneWav = (seconds = 1, rate = 16000) => wavFile(sine(440, rate, seconds), rate)

interface Upload {
  readonly upload_url: string
  readonly storage_key: string
  readonly recording_id: string
}

const grantFor = async (target: Client, account: TestAccount, mime: string, size?: number): Promise<Upload> => {
  const grant = await target.post(`${BASE}/upload-url`, {
    files: [{ filename: "greeting.wav", mime_type: mime, ...(size ? { file_size: size } : {}) }]
  }, { token: account.token })
  expect(grant.status).toBe(200)
  return grant.body.items[0]
}

const upload = async (target: Client, account: TestAccount, bytes: Uint8Array, mime = "audio/wav"): Promise<Upload> => {
  const item = await grantFor(target, account, mime, bytes.length)
  const put = await fetch(item.upload_url, { method: "PUT", headers: { "content-type": mime }, body: bytes })
  expect(put.status).toBeLessThan(300)
  return item
}

const register = (target: Client, account: TestAccount, recordings: ReadonlyArray<Record<string, unknown>>) =>
  target.post(`${BASE}/`, { recordings }, { token: account.token })

/** Uploads and registers a one-second tone under `recordingId`. */
const newClip = async (
  account: TestAccount,
  recordingId: string,
  extra: Record<string, unknown> = {},
  target = api
) => {
  const item = await upload(target, account, toneWav())
  const reply = await register(target, account, [{
    recording_id: recordingId,
    storage_key: item.storage_key,
    ...extra
  }])
  expect(reply.status).toBe(200)
  return reply.body.recordings[0]
}

const list = async (account: TestAccount, query = "") => {
  const reply = await api.get(`${BASE}/${query}`, { token: account.token })
  expect(reply.status).toBe(200)
  return reply.body.recordings as Array<{ recording_id: string }>
}

const greetingDefinition = (recordingId: string) => {
  const definition = runnableDefinition()
  Object.assign(definition.nodes[0]!.data, { greeting_type: "audio", greeting_recording_id: recordingId })
  return definition
}

/** The whole life of a clip, on whichever storage backend `running` uses. */
const roundTrip = async (running: RunningServer, target: Client, backend: "local" | "s3") => {
  const account = await newAccount(target, "clips")
  const workflow = await insertWorkflow(running, account.organizationId)
  const item = await upload(target, account, wavFile(sine(440, 22050, 1.5), 22050, { channels: 2 }))
  expect(item.storage_key).toMatch(new RegExp(`^organizations/${account.organizationId}/recordings/uploads/.+\\.wav$`))
  expect(item.recording_id).toMatch(/^[a-z2-9]{8}$/)

  const created = await register(target, account, [
    {
      recording_id: "welcome-1",
      storage_key: item.storage_key,
      label: "Welcome",
      transcript: "Hi, thanks for calling Acme.",
      workflow_id: workflow
    }
  ])
  expect(created.status).toBe(200)
  const clip = created.body.recordings[0]
  expect(clip).toMatchObject({
    recording_id: "welcome-1",
    organization_id: account.organizationId,
    workflow_id: workflow,
    label: "Welcome",
    transcript: "Hi, thanks for calling Acme.",
    storage_backend: backend,
    source_format: "wav/pcm16",
    source_sample_rate: 22050,
    source_channels: 2,
    duration_ms: 1500
  })

  // Stored once in the forms calls play: 1.5 s of 8 kHz μ-law and of 16 kHz 16-bit PCM.
  const ulaw = await running.run(
    Effect.flatMap(Recordings, (r) => r.playback(account.organizationId, "welcome-1", "ulaw_8k"))
  )
  const pcm = await running.run(
    Effect.flatMap(Recordings, (r) => r.playback(account.organizationId, "welcome-1", "pcm_16k"))
  )
  expect(ulaw.length).toBe(12000)
  expect(pcm.length).toBe(48000)

  const listed = await target.get(`${BASE}/?workflow_id=${workflow}`, { token: account.token })
  expect(listed.body).toMatchObject({ total: 1, recordings: [{ recording_id: "welcome-1" }] })
  const other = await target.get(`${BASE}/?workflow_id=${workflow + 100000}`, { token: account.token })
  expect(other.body).toEqual({ recordings: [], total: 0 })

  const relabelled = await target.patch(`${BASE}/welcome-1`, { label: "Welcome (v2)" }, { token: account.token })
  expect(relabelled.status).toBe(200)
  expect(relabelled.body).toMatchObject({ label: "Welcome (v2)", transcript: "Hi, thanks for calling Acme." })
  const cleared = await target.patch(`${BASE}/${clip.id}`, { transcript: null }, { token: account.token })
  expect(cleared.body).toMatchObject({ recording_id: "welcome-1", transcript: null })

  const removed = await target.delete(`${BASE}/welcome-1`, { token: account.token })
  expect(removed.status).toBe(200)
  expect(removed.body.success).toBe(true)
  expect((await target.get(`${BASE}/`, { token: account.token })).body).toEqual({ recordings: [], total: 0 })
  expect((await target.delete(`${BASE}/welcome-1`, { token: account.token })).status).toBe(404)
  const gone = await running.run(Effect.either(Effect.flatMap(Storage, (storage) => storage.size(item.storage_key))))
  expect(Either.isLeft(gone)).toBe(true)
}

describe("the recordings library", () => {
  it("uploads, registers, lists, edits and deletes a clip on local storage", async () => {
    await roundTrip(server, api, "local")
  })

  describe("on S3-compatible storage", () => {
    let s3: LocalS3
    let s3Server: RunningServer
    beforeAll(async () => {
      s3 = await startS3()
      s3Server = await startServer({ ...s3.env, ...LIMITS })
    })
    afterAll(async () => {
      await s3Server?.close()
      await s3?.close()
    })

    it("uploads straight to the store and completes the same round trip", async () => {
      await roundTrip(s3Server, client(s3Server.url), "s3")
    })
  })

  it("accepts MP3 and raw 8 kHz μ-law clips", async () => {
    const account = await newAccount(api, "formats")
    const mp3 = await upload(api, account, silentMp3(1), "audio/mpeg")
    const ulaw = await upload(api, account, rawMuLaw(sine(300, 8000, 2)), "audio/x-mulaw")
    const reply = await register(api, account, [
      { recording_id: "mp3clip", storage_key: mp3.storage_key },
      { recording_id: "ulawclip", storage_key: ulaw.storage_key, label: "Hold on" }
    ])
    expect(reply.status).toBe(200)
    expect(reply.body.recordings).toMatchObject([
      { recording_id: "mp3clip", label: "mp3clip", source_format: "mp3", source_sample_rate: 44100 },
      {
        recording_id: "ulawclip",
        label: "Hold on",
        source_format: "mulaw",
        source_sample_rate: 8000,
        duration_ms: 2000
      }
    ])
  })
})

describe("listening to a clip", () => {
  it("serves the clip as calls play it, a 16 kHz WAV as long as the clip, to its organization only", async () => {
    const account = await newAccount(api, "listener")
    await newClip(account, "hold-music")
    const heard = await fetch(`${server.url}${BASE}/hold-music/audio`, {
      headers: { authorization: `Bearer ${account.token}` }
    })
    expect(heard.status).toBe(200)
    expect(heard.headers.get("content-type")).toBe("audio/wav")
    const wav = decodeWav(new Uint8Array(await heard.arrayBuffer()))
    expect(wav.sampleRate).toBe(16000)
    expect(wav.samples.length / 16000).toBeCloseTo(1, 1)
    expect(Math.max(...wav.samples.subarray(0, 1600))).toBeGreaterThan(0.4)

    const stranger = await newAccount(api, "stranger")
    const elsewhere = await api.get(`${BASE}/hold-music/audio`, { token: stranger.token })
    expect(elsewhere.status).toBe(404)
    const reader = await newApiKey(api, account, ["usage:read"])
    expect((await api.get(`${BASE}/hold-music/audio`, { apiKey: reader })).status).toBe(403)
  })
})

describe("refusing clips", () => {
  it("refuses audio types it cannot decode and files over the size cap when asked for an upload URL", async () => {
    const account = await newAccount(api, "refuse")
    const csv = await api.post(`${BASE}/upload-url`, { files: [{ filename: "x.csv", mime_type: "text/csv" }] }, {
      token: account.token
    })
    expect(csv.status).toBe(422)
    expect(csv.body.detail[0].loc).toEqual(["body", "files", 0, "mime_type"])
    const big = await api.post(`${BASE}/upload-url`, {
      files: [{ filename: "x.wav", mime_type: "audio/wav", file_size: 200001 }]
    }, { token: account.token })
    expect(big.status).toBe(413)
  })

  it("refuses an upload larger than the cap at the signed URL", async () => {
    const account = await newAccount(api, "refuse")
    const item = await grantFor(api, account, "audio/wav")
    const put = await fetch(item.upload_url, {
      method: "PUT",
      headers: { "content-type": "audio/wav" },
      body: new Uint8Array(200001)
    })
    expect(put.status).toBe(413)
    const wrongType = await fetch(item.upload_url, {
      method: "PUT",
      headers: { "content-type": "audio/mpeg" },
      body: toneWav()
    })
    expect(wrongType.status).toBe(403)
  })

  it("refuses bad formats, overlong clips and missing uploads with a 422 naming the item, storing nothing", async () => {
    const account = await newAccount(api, "refuse")
    const garbage = await upload(api, account, new TextEncoder().encode("this is not audio at all"))
    const overlong = await upload(api, account, toneWav(4, 8000))
    const unsupported = wavFile(sine(440, 16000, 1), 16000)
    new DataView(unsupported.buffer).setUint16(20, 2, true)
    const adpcm = await upload(api, account, unsupported)
    const good = await upload(api, account, toneWav())
    const neverUploaded = await grantFor(api, account, "audio/wav")

    const cases: Array<[Upload, string, RegExp]> = [
      [garbage, "audio_format_invalid", /not a WAV file/],
      [overlong, "audio_too_long", /4\.0 seconds long; the limit is 3 seconds/],
      [adpcm, "audio_format_unsupported", /WAV format 2/],
      [neverUploaded, "upload_missing", /No file has been uploaded/]
    ]
    for (const [item, type, message] of cases) {
      const reply = await register(api, account, [
        { recording_id: "fine", storage_key: good.storage_key },
        { recording_id: "bad", storage_key: item.storage_key }
      ])
      expect(reply.status).toBe(422)
      expect(reply.body.detail).toEqual([{
        loc: ["body", "recordings", 1, "storage_key"],
        msg: expect.stringMatching(message),
        type
      }])
    }
    expect(await list(account)).toEqual([])
    const stored = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql`SELECT 1 FROM workflow_recordings WHERE organization_id = ${account.organizationId}`
    }))
    expect(stored).toHaveLength(0)
  })

  it("refuses a taken recording_id with 409, and ids that are malformed or repeated in one request with 422", async () => {
    const account = await newAccount(api, "dupes")
    await newClip(account, "greeting")
    const item = await upload(api, account, toneWav())
    const taken = await register(api, account, [{ recording_id: "greeting", storage_key: item.storage_key }])
    expect(taken.status).toBe(409)
    expect(taken.body.detail).toMatch(/"greeting" is already in use/)
    const malformed = await register(api, account, [{ recording_id: "has space", storage_key: item.storage_key }])
    expect(malformed.status).toBe(422)
    expect(malformed.body.detail[0].loc).toEqual(["body", "recordings", 0, "recording_id"])
    const twice = await register(api, account, [
      { recording_id: "again", storage_key: item.storage_key },
      { recording_id: "again", storage_key: item.storage_key }
    ])
    expect(twice.status).toBe(422)
    expect(twice.body.detail[0]).toMatchObject({
      loc: ["body", "recordings", 1, "recording_id"],
      type: "recording_id_duplicate"
    })
    expect((await list(account)).map((clip) => clip.recording_id)).toEqual(["greeting"])
  })
})

describe("clips in use", () => {
  it("refuses to delete a clip a published graph greets with, until the graph stops using it", async () => {
    const account = await newAccount(api, "guard")
    await newClip(account, "hello")
    const created = await api.post("/api/v1/workflow/create/definition", {
      name: "Greeter",
      workflow_definition: greetingDefinition("hello")
    }, { token: account.token })
    expect(created.status).toBe(200)
    const refused = await api.delete(`${BASE}/hello`, { token: account.token })
    expect(refused.status).toBe(409)
    expect(refused.body.detail).toMatch(/published version of workflow "Greeter"/)

    await api.put(`/api/v1/workflow/${created.body.id}`, { workflow_definition: runnableDefinition() }, {
      token: account.token
    })
    expect((await api.post(`/api/v1/workflow/${created.body.id}/publish`, undefined, { token: account.token })).status)
      .toBe(200)
    expect((await api.delete(`${BASE}/hello`, { token: account.token })).status).toBe(200)
  })

  it("refuses to delete a clip that contacts of a running or paused campaign greet with", async () => {
    const account = await newAccount(api, "guard")
    await newClip(account, "promo")
    const workflowId = await insertWorkflow(server, account.organizationId)
    const sourceId = await uploadCsv(
      api,
      { token: account.token },
      "phone_number,greeting_override_type,greeting_override_recording_id\n+14155550101,audio,promo\n+14155550102,,\n"
    )
    const campaign = await api.post("/api/v1/campaign/create", {
      name: "Promo",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: sourceId
    }, { token: account.token })
    expect(campaign.status).toBe(200)
    const setState = (state: string) =>
      server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Leased to another process, so this server's campaign engine leaves the campaign alone.
        yield* sql`UPDATE campaigns SET state = ${state}, lease_owner = 'elsewhere', lease_expires_at = now() + interval '1 hour'
                 WHERE id = ${campaign.body.id}`
      }))
    for (const state of ["running", "paused"]) {
      await setState(state)
      const refused = await api.delete(`${BASE}/promo`, { token: account.token })
      expect(refused.status).toBe(409)
      expect(refused.body.detail, state).toMatch(new RegExp(`${state} campaign "Promo"`))
    }
    await setState("completed")
    expect((await api.delete(`${BASE}/promo`, { token: account.token })).status).toBe(200)
  })
})

describe("references to clips", () => {
  it("refuses a graph naming a clip the organization does not have, naming the node or edge", async () => {
    const account = await newAccount(api, "refs")
    const missing = await api.post("/api/v1/workflow/create/definition", {
      name: "Greeter",
      workflow_definition: greetingDefinition("nope")
    }, { token: account.token })
    expect(missing.status).toBe(422)
    expect(missing.body.detail).toContainEqual({
      loc: ["body", "workflow_definition", "nodes", 0, "data", "greeting_recording_id"],
      msg: expect.stringMatching(
        /^Node "start" \(startCall\): data.greeting_recording_id "nope" is not a recording of this organization/
      ),
      type: "recording_unknown"
    })

    const definition = runnableDefinition()
    Object.assign(definition.edges[0]!.data, {
      transition_speech_type: "audio",
      transition_speech_recording_id: "later"
    })
    const edge = await api.post("/api/v1/workflow/create/definition", {
      name: "Mover",
      workflow_definition: definition
    }, { token: account.token })
    expect(edge.status).toBe(422)
    expect(edge.body.detail).toContainEqual(expect.objectContaining({
      loc: ["body", "workflow_definition", "edges", 0, "data", "transition_speech_recording_id"],
      msg: expect.stringMatching(/^Edge "e1": .*"later" is not a recording/),
      type: "recording_unknown"
    }))

    await newClip(account, "nope")
    await newClip(account, "later")
    expect(
      (await api.post("/api/v1/workflow/create/definition", {
        name: "Greeter",
        workflow_definition: greetingDefinition("nope")
      }, { token: account.token })).status
    ).toBe(200)
    expect(
      (await api.post("/api/v1/workflow/create/definition", { name: "Mover", workflow_definition: definition }, {
        token: account.token
      })).status
    ).toBe(200)
  })

  it("refuses a contacts CSV whose greeting override names a missing clip, naming the rows", async () => {
    const account = await newAccount(api, "refs")
    await newClip(account, "known")
    const workflowId = await insertWorkflow(server, account.organizationId)
    const sourceId = await uploadCsv(
      api,
      { token: account.token },
      "phone_number,greeting_override_type,greeting_override_recording_id\n+14155550101,audio,known\n+14155550102,audio,ghost\n"
    )
    const reply = await api.post("/api/v1/campaign/create", {
      name: "Ghost",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: sourceId
    }, { token: account.token })
    expect(reply.status).toBe(422)
    expect(reply.body.detail).toEqual([
      {
        loc: ["body", "source_id"],
        msg: expect.stringMatching(
          /Row 3: greeting_override_recording_id "ghost" is not a recording of this organization/i
        ),
        type: "csv_invalid"
      }
    ])
  })

  it("shows an audio greeting in chat as the clip's transcript, or its label", async () => {
    const account = await newAccount(api, "chat")
    await useLlm(api, account, "http://127.0.0.1:9")
    await newClip(account, "hello", { label: "Hello clip", transcript: "Hello from the recording!" })
    const created = await api.post("/api/v1/workflow/create/definition", {
      name: "Greeter",
      workflow_definition: greetingDefinition("hello")
    }, { token: account.token })
    const session = await api.post(`/api/v1/workflow/${created.body.id}/text-chat/sessions`, {}, {
      token: account.token
    })
    expect(session.status).toBe(200)
    expect(session.body.reply).toBe("Hello from the recording!")

    await api.patch(`${BASE}/hello`, { transcript: null }, { token: account.token })
    const labelled = await api.post(`/api/v1/workflow/${created.body.id}/text-chat/sessions`, {}, {
      token: account.token
    })
    expect(labelled.body.reply).toBe("Hello clip")
  })
})

describe("tenancy and scopes", () => {
  it("keeps each organization's clips to itself", async () => {
    const owner = await newAccount(api, "owner")
    const stranger = await newAccount(api, "stranger")
    const clip = await newClip(owner, "secret")

    expect(await list(stranger)).toEqual([])
    expect((await api.patch(`${BASE}/secret`, { label: "mine" }, { token: stranger.token })).status).toBe(404)
    expect((await api.patch(`${BASE}/${clip.id}`, { label: "mine" }, { token: stranger.token })).status).toBe(404)
    expect((await api.delete(`${BASE}/secret`, { token: stranger.token })).status).toBe(404)
    expect((await api.delete(`${BASE}/${clip.id}`, { token: stranger.token })).status).toBe(404)

    const stolen = await register(api, stranger, [{ recording_id: "stolen", storage_key: clip.storage_key }])
    expect(stolen.status).toBe(422)
    expect(stolen.body.detail[0]).toMatchObject({
      loc: ["body", "recordings", 0, "storage_key"],
      type: "storage_key_invalid"
    })
    const graph = await api.post("/api/v1/workflow/create/definition", {
      name: "Borrower",
      workflow_definition: greetingDefinition("secret")
    }, { token: stranger.token })
    expect(graph.status).toBe(422)

    // Public ids are unique per organization, not globally.
    await newClip(stranger, "secret")
    expect((await list(owner)).map((item) => item.recording_id)).toEqual(["secret"])
    expect((await api.get(`${BASE}/`, { token: owner.token })).body.recordings[0].label).toBe("secret")
  })

  it("needs agents:read to list and agents:write to change the library", async () => {
    const account = await newAccount(api, "scopes")
    const reader = await newApiKey(api, account, ["agents:read"])
    expect((await api.get(`${BASE}/`, { apiKey: reader })).status).toBe(200)
    const refused = await api.post(`${BASE}/upload-url`, { files: [{ mime_type: "audio/wav" }] }, { apiKey: reader })
    expect(refused.status).toBe(403)
    expect((await api.get(`${BASE}/`)).status).toBe(401)
  })
})
