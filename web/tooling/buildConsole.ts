import { buildConsoleIfStale } from "./buildIfStale.ts"

buildConsoleIfStale()
