import { HttpClientRequest } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { OutboundHttp } from "../services/OutboundHttp.ts"
import { LoopbackOutbound } from "./support/outbound.ts"

/**
 * A carrier API in a process of its own, so it closes idle connections on time while this one is
 * busy. It keeps a connection 2 s (announced as `Keep-Alive: timeout=2`, which node's client
 * honours by dropping the socket after 1 s) and answers each request with its connection's number.
 */
const SERVER = `
const http = require("node:http")
let connections = 0
const server = http.createServer((request, response) => {
  request.resume()
  request.on("end", () => response.end(String(request.socket.number)))
})
server.on("connection", (socket) => { socket.number = ++connections })
server.keepAliveTimeout = 2000
server.listen(0, "127.0.0.1", () => console.log(server.address().port))
`

let carrier: ChildProcess
let base = ""

beforeAll(async () => {
  carrier = spawn(process.execPath, ["-e", SERVER], { stdio: ["ignore", "pipe", "inherit"] })
  const [port] = await once(carrier.stdout!, "data")
  base = `http://127.0.0.1:${String(port).trim()}`
})
afterAll(() => {
  carrier.kill()
})

/** A call creation as the carrier adapters send it: a form POST on the carrier's kept-alive agent. */
const createCall = Effect.gen(function*() {
  const outbound = yield* OutboundHttp
  const response = yield* outbound.client("carrier").execute(
    HttpClientRequest.post(`${base}/Calls.json`).pipe(HttpClientRequest.bodyUrlParams({ To: "+15550100" }))
  )
  return { status: response.status, connection: yield* response.text }
})

/** Blocks the event loop, as a saturated process does: timers and the server's FIN wait behind it. */
const busyFor = (ms: number) =>
  Effect.sync(() => {
    const until = Date.now() + ms
    while (Date.now() < until) {
      // Spinning on purpose: nothing else may run meanwhile.
    }
  })

describe("the carrier's kept-alive connections", () => {
  it.live("carry back-to-back requests on one connection", () =>
    Effect.gen(function*() {
      const first = yield* createCall
      const second = yield* createCall
      expect(second).toEqual({ status: 200, connection: first.connection })
    }).pipe(Effect.provide(LoopbackOutbound)))

  it.live(
    "place a call after the process was too busy to notice the carrier closed the idle connection",
    () =>
      Effect.gen(function*() {
        const first = yield* createCall
        expect(first.status).toBe(200)
        // Let the answer free its socket, then stay busy past the carrier's idle close (2 s, ~3 s in all).
        yield* Effect.sleep(20)
        yield* busyFor(4000)
        const second = yield* createCall.pipe(Effect.either)
        expect(second._tag === "Right" ? second.right.status : String(second.left)).toBe(200)
        expect(second._tag === "Right" && second.right.connection).not.toBe(first.connection)
      }).pipe(Effect.provide(LoopbackOutbound)),
    15_000
  )
})
