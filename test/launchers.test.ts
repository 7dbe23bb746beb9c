import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, inject, it } from "vitest"
import { eventually, isRunning, launchThroughNpm, lockFileExists, portIsFree, serverPid } from "./support/launchers.ts"
import { freePort, spawnTalkgraph, waitUntilServing } from "./support/process.ts"

const dirs: Array<string> = []
afterAll(async () => {
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
})

const waitForHealth = async (url: string, output: () => string) => {
  const serving = await eventually(() => fetch(`${url}/api/v1/health`).then((reply) => reply.ok, () => false), 60_000)
  if (!serving) throw new Error(`talkgraph did not start:\n${output()}`)
}

/**
 * Starts talkgraph through npm, sends `signal` to npm (or to its whole process group, as a
 * terminal's Ctrl-C does), and reports what is left: the server process, its data-dir lock, the port.
 */
const stopThroughNpm = async (command: ReadonlyArray<string>, signal: NodeJS.Signals, target: "npm" | "group") => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-launch-"))
  dirs.push(dataDir)
  await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
  const port = await freePort()
  const launched = launchThroughNpm(command, { TALKGRAPH_DATA_DIR: dataDir, PORT: String(port) })
  let pid: number | undefined
  try {
    await waitForHealth(`http://127.0.0.1:${port}`, launched.output)
    pid = await serverPid(dataDir)
    expect(pid).not.toBe(launched.launcher.pid)
    process.kill(target === "group" ? -launched.launcher.pid! : launched.launcher.pid!, signal)
    await eventually(async () => !isRunning(pid!), 15_000)
    const npmExited = await Promise.race([
      launched.exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000))
    ])
    return {
      npmExited,
      serverRunning: isRunning(pid),
      lockLeft: await lockFileExists(dataDir),
      portFree: await portIsFree(port),
      output: launched.output()
    }
  } finally {
    if (pid !== undefined && isRunning(pid)) process.kill(pid, "SIGKILL")
    if (launched.launcher.exitCode === null && launched.launcher.signalCode === null) launched.launcher.kill("SIGKILL")
  }
}

/** The processes whose parent is `pid` (Linux: /proc). */
const childrenOf = async (pid: number) => {
  const children: Array<number> = []
  for (const name of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue
    const stat = await fs.readFile(`/proc/${name}/stat`, "utf8").catch(() => "")
    if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) children.push(Number(name))
  }
  return children
}

describe("what npm start leaves running", () => {
  it.skipIf(process.platform !== "linux")(
    "only npm and the server, its child: no build tool or shell between them, and no speech runtime before a call",
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-launch-"))
      dirs.push(dataDir)
      await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
      const port = await freePort()
      const launched = launchThroughNpm(["npm", "start"], { TALKGRAPH_DATA_DIR: dataDir, PORT: String(port) })
      try {
        await waitForHealth(`http://127.0.0.1:${port}`, launched.output)
        const pid = await serverPid(dataDir)
        expect(await childrenOf(launched.launcher.pid!)).toEqual([pid])
        // The ONNX runtime (voice activity detection) is a native library of ~20 MB: mapped on the first call only.
        expect(await fs.readFile(`/proc/${pid}/maps`, "utf8")).not.toContain("onnxruntime")
      } finally {
        process.kill(launched.launcher.pid!, "SIGTERM")
        await Promise.race([launched.exited, new Promise((resolve) => setTimeout(resolve, 15_000))])
      }
    },
    90_000
  )
})

const cleanlyStopped = { npmExited: true, serverRunning: false, lockLeft: false, portFree: true }

describe("stopping a server started with npm start", () => {
  it.each(["SIGTERM", "SIGINT", "SIGHUP"] as const)(
    "%s to npm stops the server, frees the port and releases the data dir",
    async (signal) => {
      expect(await stopThroughNpm(["npm", "start"], signal, "npm")).toMatchObject(cleanlyStopped)
    },
    90_000
  )

  it("Ctrl-C in the terminal (SIGINT to npm and the server at once) stops it cleanly", async () => {
    expect(await stopThroughNpm(["npm", "start"], "SIGINT", "group")).toMatchObject(cleanlyStopped)
  }, 90_000)
})

describe("stopping a server started with npx talkgraph serve", () => {
  it.each(["SIGTERM", "SIGHUP"] as const)("%s to npx stops the server behind its shell", async (signal) => {
    const left = await stopThroughNpm(["npx", "talkgraph", "serve"], signal, "npm")
    expect(left).toMatchObject(cleanlyStopped)
    expect(left.output).toContain("npm, which started talkgraph, has exited: stopping")
  }, 90_000)
})

describe("a signal repeated while the server stops", () => {
  it("does not cut the shutdown short (the terminal and npm both deliver Ctrl-C)", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-launch-"))
    dirs.push(dataDir)
    await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
    const port = await freePort()
    const proc = spawnTalkgraph(["serve"], { TALKGRAPH_DATA_DIR: dataDir, PORT: String(port) })
    try {
      await waitUntilServing(proc, `http://127.0.0.1:${port}`)
      proc.child.kill("SIGINT")
      await new Promise((resolve) => setTimeout(resolve, 100))
      proc.child.kill("SIGINT")
      expect(await proc.exited).toBe(0)
      expect(proc.child.signalCode).toBeNull()
      expect(await lockFileExists(dataDir)).toBe(false)
    } finally {
      proc.child.kill("SIGKILL")
    }
  }, 90_000)
})
