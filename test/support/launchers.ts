import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as path from "node:path"

const REPOSITORY = path.resolve(import.meta.dirname, "../..")

interface LaunchedTalkgraph {
  readonly launcher: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/**
 * Runs talkgraph the way a newcomer does, through npm (`npm start`, `npx talkgraph serve`), in a
 * process group of its own so a test can signal npm alone or the whole group as a terminal does.
 */
export const launchThroughNpm = (command: ReadonlyArray<string>, env: Record<string, string>): LaunchedTalkgraph => {
  const [program, ...args] = command
  const launcher = spawn(program!, args, {
    cwd: REPOSITORY,
    detached: true,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      LOG_LEVEL: "warning",
      npm_config_update_notifier: "false",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  launcher.stdout!.on("data", (chunk) => (output += chunk))
  launcher.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => launcher.on("exit", (code) => resolve(code)))
  return { launcher, output: () => output, exited }
}

/** The pid of the server holding the embedded data dir, from its lock file. */
export const serverPid = async (dataDir: string) =>
  Number((await fs.readFile(path.join(dataDir, "talkgraph.pid"), "utf8")).trim())

export const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export const lockFileExists = (dataDir: string) =>
  fs.access(path.join(dataDir, "talkgraph.pid")).then(() => true, () => false)

/** Whether nothing listens on the port any more: this process can bind it. */
export const portIsFree = (port: number, host = "127.0.0.1") =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, host, () => server.close(() => resolve(true)))
  })

/** Polls `check` until it holds or `timeoutMs` passes; answers whether it held. */
export const eventually = async (check: () => boolean | Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return check()
}
