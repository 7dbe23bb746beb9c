import * as fs from "node:fs/promises"

/** User + system CPU the process has used, in ms (`/proc/<pid>/stat` fields 14 and 15, in clock ticks of 10 ms). */
export const cpuMs = async (pid: number) => {
  const fields = (await fs.readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}
