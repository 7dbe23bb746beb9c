import { HttpApiBuilder, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { consoleBuildDir } from "./consoleBuildDir.ts"

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2",
  ".map": "application/json"
}

/** Vite names every asset after its content, so a browser may keep one for good. */
const IMMUTABLE = "public, max-age=31536000, immutable"

/** The API's own paths answer as they always did, with the API's 404, never with the console page. */
const belongsToApi = (pathname: string) =>
  pathname === "/api" || pathname.startsWith("/api/") || pathname.startsWith("/docs") ||
  pathname === "/openapi.json"

const readInside = (root: string, relative: string) =>
  Effect.promise(async () => {
    const file = path.resolve(root, "." + relative)
    if (!file.startsWith(root + path.sep)) return Option.none()
    const bytes = await fs.readFile(file).catch(() => undefined)
    return bytes ? Option.some({ file, bytes }) : Option.none()
  })

const fileResponse = (file: string, bytes: Uint8Array, cacheControl: string) =>
  HttpServerResponse.uint8Array(bytes, {
    contentType: contentTypes[path.extname(file)] ?? "application/octet-stream",
    headers: { "cache-control": cacheControl, "x-content-type-options": "nosniff" }
  })

const notBuilt = HttpServerResponse.text(
  "The talkgraph console has not been built: run `npm run build:web` (npm start does it for you).",
  { status: 503, headers: { "cache-control": "no-store" } }
)

/**
 * The web console (web/) at `/`: hashed assets cached for good, any other path (a client-side
 * route) answered with index.html, which is never cached so a new build reaches the browser at once.
 * Registered as the router's wildcard, so every API route keeps precedence.
 */
export const ConsoleRoutes = HttpApiBuilder.Router.use((router) =>
  router.get(
    "*",
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const pathname = decodeURIComponent(new URL(request.url, "http://console").pathname)
      if (belongsToApi(pathname)) return yield* Effect.fail(new HttpServerError.RouteNotFound({ request }))
      const root = consoleBuildDir()
      if (pathname.startsWith("/assets/")) {
        const asset = yield* readInside(root, pathname)
        if (Option.isNone(asset)) return yield* Effect.fail(new HttpServerError.RouteNotFound({ request }))
        return fileResponse(asset.value.file, asset.value.bytes, IMMUTABLE)
      }
      const file = path.extname(pathname) ? yield* readInside(root, pathname) : Option.none()
      if (Option.isSome(file)) return fileResponse(file.value.file, file.value.bytes, "no-cache")
      const index = yield* readInside(root, "/index.html")
      if (Option.isNone(index)) return notBuilt
      return fileResponse(index.value.file, index.value.bytes, "no-cache")
    }).pipe(Effect.catchIf((error) => error instanceof URIError, () => Effect.succeed(notFoundText)))
  )
)

const notFoundText = HttpServerResponse.text("Not Found", { status: 404 })
