import { createRequire } from "node:module"

export const serviceVersion: string = createRequire(import.meta.url)("../package.json").version
