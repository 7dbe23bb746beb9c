import { buildConsoleIfStale } from "./buildIfStale.ts"

await buildConsoleIfStale()
