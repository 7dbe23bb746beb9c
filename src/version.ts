import { createRequire } from "node:module"

// By the package's own name, so it is found from the sources, from dist/ and from an installed package.
export const serviceVersion: string = createRequire(import.meta.url)("talkgraph/package.json").version
