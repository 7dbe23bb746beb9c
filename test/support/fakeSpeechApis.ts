import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { monoPcm16Wav } from "../../src/audio/pcmWav.ts"
import { decodeWav } from "../../src/audio/wav.ts"
import { speak } from "./speechAudio.ts"

/**
 * Loopback stand-ins for the speech providers' HTTP APIs on 127.0.0.1, answering with real audio:
 *
 * - ElevenLabs `POST /v1/text-to-speech/{voice}/stream?output_format=pcm_{rate}` (`xi-api-key`)
 * - Cartesia `POST /tts/bytes` with `output_format {container: raw, encoding: pcm_s16le, sample_rate}`
 *   (`X-API-Key` + `Cartesia-Version`)
 * - Deepgram `POST /v1/speak?encoding=linear16&sample_rate=…&container=none` (`Authorization: Token`);
 *   without `container=none` the audio comes in a WAV, as Deepgram's REST default
 * - OpenAI `POST /v1/audio/speech` with `response_format: pcm` (24 kHz) (`Authorization: Bearer`)
 * - OpenAI `POST /v1/audio/transcriptions` (multipart WAV): an oracle answering the lines a test
 *   registered with `scriptTranscriptions`, in order
 *
 * Speech is eSpeak NG rendered at the requested rate (or a tone, `audio: "tone"`), streamed in
 * chunks of odd byte lengths (a sample may straddle two chunks, as on the real wire) after
 * `firstByteDelayMs`. Every request is recorded, with whether the client aborted it mid-stream.
 */
type SpeechApi = "elevenlabs" | "cartesia" | "deepgram" | "openai" | "openai-transcription"

interface FakeSpeechRequest {
  readonly api: SpeechApi
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: IncomingMessage["headers"]
  readonly body: unknown
  /** The text to speak, or for a transcription the line answered. */
  readonly text: string
  /** Sample rate of the audio sent (TTS) or received (transcription). */
  readonly sampleRate: number | null
  /** Seconds of audio sent (TTS) or received (transcription). */
  audioSeconds: number
  bytesSent: number
  /** The client went away before the whole answer was sent. */
  aborted: boolean
  completed: boolean
}

interface FakeSpeechApisOptions {
  readonly apiKey?: string
  readonly audio?: "speech" | "tone"
  readonly firstByteDelayMs?: number
  /** Audio per chunk (default 40 ms), sent `chunkIntervalMs` apart (default 5 ms; 0 = back to back). */
  readonly chunkMs?: number
  readonly chunkIntervalMs?: number
}

export interface FakeSpeechApis {
  /** The `base_url` to configure for any of the providers (http://127.0.0.1:port). */
  readonly url: string
  readonly apiKey: string
  readonly requests: ReadonlyArray<FakeSpeechRequest>
  /** Lines the transcription endpoint answers, one per request, in order ("" once they run out). */
  readonly scriptTranscriptions: (lines: ReadonlyArray<string>) => void
  readonly setFirstByteDelay: (ms: number) => void
  readonly close: () => Promise<void>
}

const ELEVENLABS_RATES = new Set([8000, 16000, 22050, 24000, 44100, 48000])
const OPENAI_PCM_RATE = 24000

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const parts: Array<Buffer> = []
    request.on("data", (part: Buffer) => parts.push(part))
    request.on("end", () => resolve(Buffer.concat(parts)))
    request.on("error", reject)
  })

const tone = (text: string, rate: number) => {
  const length = Math.round(rate * Math.max(0.3, Math.min(10, text.length * 0.06)))
  return Int16Array.from({ length }, (_, i) => Math.round(0.3 * 32767 * Math.sin((2 * Math.PI * 440 * i) / rate)))
}

const pcmBytes = (samples: Int16Array) => {
  const bytes = Buffer.alloc(samples.length * 2)
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2)
  return bytes
}

const sleep = (ms: number) => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)))

export const startFakeSpeechApis = async (options: FakeSpeechApisOptions = {}): Promise<FakeSpeechApis> => {
  const apiKey = options.apiKey ?? "test-speech-key"
  const chunkMs = options.chunkMs ?? 40
  const chunkIntervalMs = options.chunkIntervalMs ?? 5
  let firstByteDelayMs = options.firstByteDelayMs ?? 0
  const requests: Array<FakeSpeechRequest> = []
  const transcriptions: Array<string> = []

  const audioFor = (
    text: string,
    rate: number
  ) => (options.audio === "tone" ? Promise.resolve(tone(text, rate)) : speak(text, rate))

  const fail = (response: ServerResponse, status: number, detail: string) => {
    response.writeHead(status, { "content-type": "application/json" }).end(
      JSON.stringify({ error: { message: detail } })
    )
  }

  const stream = async (record: FakeSpeechRequest, response: ServerResponse, audio: Buffer, rate: number) => {
    response.on("close", () => {
      if (!response.writableFinished) record.aborted = true
    })
    await sleep(firstByteDelayMs)
    if (record.aborted) return
    response.writeHead(200, { "content-type": "application/octet-stream" })
    // Odd byte counts on purpose: clients must carry half a sample over to the next chunk.
    const chunkBytes = Math.round((rate * chunkMs) / 1000) * 2 + 1
    for (let at = 0; at < audio.length && !record.aborted; at += chunkBytes) {
      const chunk = audio.subarray(at, at + chunkBytes)
      response.write(chunk)
      record.bytesSent += chunk.length
      await sleep(chunkIntervalMs)
    }
    if (record.aborted) return
    record.completed = true
    response.end()
  }

  const speech = async (request: IncomingMessage, response: ServerResponse, url: URL, body: Buffer) => {
    const header = (name: string) => request.headers[name]
    let json: Record<string, any>
    try {
      json = JSON.parse(body.toString())
    } catch {
      return fail(response, 400, "body is not JSON")
    }
    const record = (api: SpeechApi, text: string, sampleRate: number): FakeSpeechRequest => {
      const entry: FakeSpeechRequest = {
        api,
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
        body: json,
        text,
        sampleRate,
        audioSeconds: 0,
        bytesSent: 0,
        aborted: false,
        completed: false
      }
      requests.push(entry)
      return entry
    }
    const send = async (entry: FakeSpeechRequest, samples: Int16Array, wrapInWav = false) => {
      entry.audioSeconds = samples.length / entry.sampleRate!
      await stream(
        entry,
        response,
        wrapInWav ? Buffer.from(monoPcm16Wav([samples], entry.sampleRate!)) : pcmBytes(samples),
        entry.sampleRate!
      )
    }

    const elevenlabs = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname)
    if (elevenlabs) {
      if (header("xi-api-key") !== apiKey) return fail(response, 401, "invalid_api_key")
      const rate = Number(/^pcm_(\d+)$/.exec(url.searchParams.get("output_format") ?? "")?.[1])
      if (!ELEVENLABS_RATES.has(rate)) return fail(response, 422, "unsupported output_format")
      if (typeof json.text !== "string") return fail(response, 422, "text is required")
      const entry = record("elevenlabs", json.text, rate)
      return send(entry, await audioFor(json.text, rate))
    }
    if (url.pathname === "/tts/bytes") {
      if (header("x-api-key") !== apiKey && header("authorization") !== `Bearer ${apiKey}`) {
        return fail(response, 401, "invalid api key")
      }
      if (typeof header("cartesia-version") !== "string") {
        return fail(response, 400, "Cartesia-Version header is required")
      }
      const format = json.output_format ?? {}
      if (format.container !== "raw" || format.encoding !== "pcm_s16le" || !(format.sample_rate > 0)) {
        return fail(response, 400, "unsupported output_format")
      }
      if (typeof json.transcript !== "string" || typeof json.model_id !== "string" || json.voice?.mode !== "id") {
        return fail(response, 400, "transcript, model_id and voice are required")
      }
      const entry = record("cartesia", json.transcript, format.sample_rate)
      return send(entry, await audioFor(json.transcript, format.sample_rate))
    }
    if (url.pathname === "/v1/speak") {
      if (header("authorization") !== `Token ${apiKey}`) return fail(response, 401, "INVALID_AUTH")
      const rate = Number(url.searchParams.get("sample_rate") ?? 24000)
      if (url.searchParams.get("encoding") !== "linear16" || !(rate > 0)) {
        return fail(response, 400, "unsupported encoding")
      }
      if (typeof json.text !== "string") return fail(response, 400, "text is required")
      const entry = record("deepgram", json.text, rate)
      return send(entry, await audioFor(json.text, rate), url.searchParams.get("container") !== "none")
    }
    if (url.pathname === "/v1/audio/speech") {
      if (header("authorization") !== `Bearer ${apiKey}`) return fail(response, 401, "invalid_api_key")
      if (json.response_format !== "pcm") return fail(response, 400, "this stand-in only speaks pcm")
      if (typeof json.input !== "string" || typeof json.model !== "string" || typeof json.voice !== "string") {
        return fail(response, 400, "model, input and voice are required")
      }
      const entry = record("openai", json.input, OPENAI_PCM_RATE)
      return send(entry, await audioFor(json.input, OPENAI_PCM_RATE))
    }
    return fail(response, 404, "not found")
  }

  const transcription = async (request: IncomingMessage, response: ServerResponse, url: URL, body: Buffer) => {
    if (request.headers.authorization !== `Bearer ${apiKey}`) return fail(response, 401, "invalid_api_key")
    const form = await new Response(body, { headers: { "content-type": request.headers["content-type"] ?? "" } })
      .formData()
    const file = form.get("file")
    if (!(file instanceof Blob) || typeof form.get("model") !== "string") {
      return fail(response, 400, "file and model are required")
    }
    let audio
    try {
      audio = decodeWav(new Uint8Array(await file.arrayBuffer()))
    } catch {
      return fail(response, 400, "file is not a WAV")
    }
    const text = transcriptions.shift() ?? ""
    requests.push({
      api: "openai-transcription",
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body: Object.fromEntries([...form.entries()].filter(([, value]) => typeof value === "string")),
      text,
      sampleRate: audio.sampleRate,
      audioSeconds: audio.samples.length / audio.sampleRate,
      bytesSent: 0,
      aborted: false,
      completed: true
    })
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ text }))
  }

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://fake")
    readBody(request)
      .then((body) => {
        if (request.method !== "POST") return fail(response, 405, "method not allowed")
        return url.pathname === "/v1/audio/transcriptions"
          ? transcription(request, response, url, body)
          : speech(request, response, url, body)
      })
      .catch(() => {
        if (!response.headersSent) fail(response, 500, "stand-in failed")
        else response.destroy()
      })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    scriptTranscriptions: (lines) => transcriptions.push(...lines),
    setFirstByteDelay: (ms) => {
      firstByteDelayMs = ms
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
