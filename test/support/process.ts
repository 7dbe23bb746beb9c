import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"

const BIN = path.resolve(import.meta.dirname, "../../bin/talkgraph.js")

export interface TalkgraphProcess {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** Runs the real `talkgraph` command as its own process, as an operator would. */
export const spawnTalkgraph = (args: ReadonlyArray<string>, env: Record<string, string>): TalkgraphProcess => {
  // TALKGRAPH_NODE_ARGS lets a benchmark profile the server it spawns (e.g. "--cpu-prof").
  const nodeArgs = process.env.TALKGRAPH_NODE_ARGS?.split(" ").filter(Boolean) ?? []
  const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      LOG_LEVEL: "warning",
      // The stand-ins a test or benchmark points providers at all listen on 127.0.0.1.
      TALKGRAPH_OUTBOUND_ALLOW: "loopback",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
    server.on("error", reject)
  })

/** Polls the health endpoint until the process serves, or fails with its output. */
export const waitUntilServing = async (proc: TalkgraphProcess, url: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`talkgraph exited early:\n${proc.output()}`)
    try {
      const reply = await fetch(`${url}/api/v1/health`)
      if (reply.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`talkgraph did not start within ${timeoutMs} ms:\n${proc.output()}`)
}

export const stop = async (proc: TalkgraphProcess) => {
  if (proc.child.exitCode === null) proc.child.kill("SIGTERM")
  return proc.exited
}
