import { Effect, Option, Schedule } from "effect"
import * as fs from "node:fs"

/** Shells npm runs a script or an `npm exec` command through (`sh -c …`). */
const SHELLS = new Set(["sh", "dash", "bash", "zsh", "ash", "ksh", "busybox"])

/** A process's command name and parent pid, where `/proc` tells them (Linux). */
const processInfo = (pid: number): Option.Option<{ readonly command: string; readonly parent: number }> => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // `pid (command) state ppid …`: the command may itself hold spaces or parentheses, the fields after the last ")" cannot.
    const end = stat.lastIndexOf(")")
    const parent = Number(stat.slice(end + 2).split(" ")[1])
    return Number.isInteger(parent)
      ? Option.some({ command: stat.slice(stat.indexOf("(") + 1, end), parent })
      : Option.none()
  } catch {
    return Option.none()
  }
}

/**
 * The processes between npm and this one. npm runs a script (and `npx`/`npm exec` a package's
 * bin) through `sh -c`, and dash — /bin/sh on Debian and Ubuntu — does not replace itself with
 * the command, so the chain can be npm → sh → talkgraph. `undefined` when npm did not start us.
 */
const launchChain = (): ReadonlyArray<{ readonly pid: number; readonly parent: number }> | undefined => {
  if (process.env.npm_lifecycle_event === undefined) return undefined
  const parent = process.ppid
  const shell = processInfo(parent).pipe(Option.filter((info) => SHELLS.has(info.command)))
  return Option.match(shell, {
    onNone: () => [{ pid: process.pid, parent }],
    onSome: (info) => [{ pid: process.pid, parent }, { pid: parent, parent: info.parent }]
  })
}

const isIntact = (chain: ReadonlyArray<{ readonly pid: number; readonly parent: number }>) =>
  chain.every(({ pid, parent }) =>
    pid === process.pid ? process.ppid === parent : Option.exists(processInfo(pid), (info) => info.parent === parent)
  )

/** Asks the running command to stop exactly as a SIGTERM would (NodeRuntime.runMain listens for it). */
const stopAsOnSigterm = () => {
  process.emit("SIGTERM", "SIGTERM")
}

/**
 * Every way an operator stops talkgraph ends in one clean shutdown (connections closed, the
 * embedded database written and its data-dir lock released):
 *
 * - SIGINT and SIGTERM interrupt the program (NodeRuntime.runMain). Later ones are ignored rather
 *   than killing a process that is already stopping: Ctrl-C reaches the server from the terminal
 *   and a second time forwarded by npm.
 * - SIGHUP stops it the same way (its default would kill it on the spot).
 * - When npm started it (`npm start`, `npx talkgraph`), it stops when npm goes away. npm forwards
 *   only SIGINT and SIGTERM to its child, and a shell between the two does not pass them on, so a
 *   `kill` of npm would otherwise leave the server running, holding the port and the data dir.
 */
export const stopOnShutdownSignals = Effect.gen(function*() {
  yield* Effect.sync(() => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => undefined)
    process.on("SIGHUP", stopAsOnSigterm)
  })
  const chain = launchChain()
  if (chain === undefined) return yield* Effect.never
  yield* Effect.sync(() => isIntact(chain)).pipe(
    Effect.repeat({ schedule: Schedule.spaced("1 second"), while: (intact) => intact })
  )
  yield* Effect.logWarning("npm, which started talkgraph, has exited: stopping")
  yield* Effect.sync(stopAsOnSigterm)
  return yield* Effect.never
})
