import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, Layer, Option } from "effect"
import { Credentials } from "../../services/Credentials.ts"
import { McpServers, McpUnavailable } from "../../services/McpServers.ts"
import { OutboundBlocked, OutboundHttp } from "../../services/OutboundHttp.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"
import { credentialHeader } from "../../src/tools/credentialHeaders.ts"
import { SECRET_FIELDS } from "../../src/tools/credentialRecord.ts"
import { keptCatalogEntry, mcpResultText } from "../../src/tools/mcpTools.ts"
import { type McpConfig, type McpDiscoveredTool, mcpTimeoutMs } from "../../src/tools/toolDefinition.ts"
import { serviceVersion } from "../../src/version.ts"
import { ReplyTooLarge } from "../outbound/replyBody.ts"
import { TOOL_ANSWER_CAP } from "./httpToolCall.ts"
import { type HostBoundHeader, policyFetch } from "./mcpFetch.ts"

/** A catalog longer than this is cut: the model could not choose among more anyway. */
const MAX_CATALOG_PAGES = 20
const MAX_CATALOG_TOOLS = 500

class McpTimedOut extends Error {}

/** The errors behind an error, outermost first (the SDK wraps a failed fetch in its own). */
const causes = (error: unknown): Array<unknown> => {
  const chain: Array<unknown> = []
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    chain.push(current)
    current = (current as { cause?: unknown }).cause
  }
  return chain
}

/** A secret that was sent must not come back in what the model reads. */
const scrub = (text: string, secrets: ReadonlyArray<string>) =>
  secrets.reduce((scrubbed, secret) => (secret.length >= 4 ? scrubbed.split(secret).join("****") : scrubbed), text)

/** Why an exchange failed, in talkgraph's words: never a header, and the server's own words only from JSON-RPC errors. */
/** The MCP client library, loaded on the first MCP request rather than at start (with its validators, ~0.3 s). */
const mcpSdk = async () => {
  const [client, sse, streamable, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return {
    Client: client.Client,
    SSEClientTransport: sse.SSEClientTransport,
    SseError: sse.SseError,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    StreamableHTTPError: streamable.StreamableHTTPError,
    McpError: types.McpError
  }
}
type McpSdk = Awaited<ReturnType<typeof mcpSdk>>

const failureText = (
  sdk: McpSdk | null,
  error: unknown,
  timeoutMs: number,
  secrets: ReadonlyArray<string>
): string => {
  const chain = causes(error)
  if (chain.some((each) => each instanceof McpTimedOut)) return `the MCP server did not answer within ${timeoutMs} ms`
  if (chain.some((each) => each instanceof OutboundBlocked)) {
    return "the MCP server's address is refused by the organization's outbound policy"
  }
  if (chain.some((each) => each instanceof ReplyTooLarge)) {
    return `the MCP server's answer was larger than ${TOOL_ANSWER_CAP / 1024 / 1024} MB`
  }
  const status = chain.find((each) =>
    sdk !== null && (each instanceof sdk.StreamableHTTPError || each instanceof sdk.SseError)
  ) as
    | { code?: number }
    | undefined
  if (status?.code !== undefined && status.code > 0) {
    return `the MCP server answered HTTP ${status.code}${
      status.code === 401 || status.code === 403 ? " (the credential is missing or refused)" : ""
    }`
  }
  const rpc = chain.find((each): each is Error => sdk !== null && each instanceof sdk.McpError)
  if (rpc) return `the MCP server refused the request: ${scrub(rpc.message, secrets).slice(0, 500)}`
  const code = chain.map((each) => (each as { code?: unknown }).code).find((each) => typeof each === "string")
  return `the MCP server could not be reached${code ? ` (${String(code)})` : ""}`
}

interface Session {
  readonly client: Client
  readonly signal: AbortSignal
  readonly timeoutMs: number
}

export const McpServersLive = Layer.effect(
  McpServers,
  Effect.gen(function*() {
    const outbound = yield* OutboundHttp
    const credentials = yield* Credentials

    /** The credential's header, only when the server's host is the one it is bound to. */
    const credentialFor = (organizationId: OrganizationId, config: McpConfig) =>
      Effect.gen(function*() {
        if (!config.credential_uuid) return { header: null, secrets: [] as Array<string> }
        const credential = yield* credentials.forRequest(organizationId, config.credential_uuid)
        if (Option.isNone(credential)) {
          return yield* new McpUnavailable({ message: "the tool's credential no longer exists" })
        }
        const host = new URL(config.url).host.toLowerCase()
        const boundHere = credential.value.boundHost === host ||
          (credential.value.boundHost === null && (yield* credentials.bind(organizationId, credential.value.id, host)))
        if (!boundHere) {
          yield* Effect.logWarning("An MCP tool's credential was refused for a host it is not bound to").pipe(
            Effect.annotateLogs({ host, bound_host: credential.value.boundHost })
          )
          return yield* new McpUnavailable({
            message: "the tool's credential is bound to another host and is never sent elsewhere"
          })
        }
        const made = credentialHeader(credential.value.type, credential.value.data)
        const header: HostBoundHeader | null = made ? { host, ...made } : null
        return {
          header,
          secrets: made
            ? [made.value, ...SECRET_FIELDS[credential.value.type].map((field) => credential.value.data[field] ?? "")]
            : []
        }
      })

    /**
     * Opens a session, runs `exchange` in it and closes it, all within the tool's timeout; an
     * interruption (a caller who speaks) aborts it too.
     */
    const withSession = <A>(
      organizationId: OrganizationId,
      config: McpConfig,
      exchange: (session: Session, secrets: ReadonlyArray<string>) => Promise<A>
    ): Effect.Effect<A, McpUnavailable> =>
      Effect.gen(function*() {
        const { header, secrets } = yield* credentialFor(organizationId, config)
        const timeoutMs = mcpTimeoutMs(config)
        let sdk: McpSdk | null = null
        return yield* Effect.tryPromise({
          try: async (interrupted) => {
            sdk = await mcpSdk()
            const { Client, SSEClientTransport, StreamableHTTPClientTransport } = sdk
            const controller = new AbortController()
            const timer = setTimeout(() => controller.abort(new McpTimedOut()), timeoutMs)
            const onInterrupt = () => controller.abort()
            interrupted.addEventListener("abort", onInterrupt, { once: true })
            const fetch = policyFetch(outbound, {
              credential: header,
              cap: TOOL_ANSWER_CAP,
              onTooLarge: () => controller.abort(new ReplyTooLarge(TOOL_ANSWER_CAP))
            })
            const url = new URL(config.url)
            const streamable = config.transport !== "sse"
            const transport = streamable
              ? new StreamableHTTPClientTransport(url, { fetch })
              : new SSEClientTransport(url, { fetch })
            const client = new Client({ name: "talkgraph", version: serviceVersion })
            try {
              await client.connect(transport, { signal: controller.signal, timeout: timeoutMs })
              return await exchange({ client, signal: controller.signal, timeoutMs }, secrets)
            } catch (error) {
              const reason: unknown = controller.signal.reason
              throw reason instanceof McpTimedOut || reason instanceof ReplyTooLarge ? reason : error
            } finally {
              clearTimeout(timer)
              interrupted.removeEventListener("abort", onInterrupt)
              // The spec asks a client to end a session it no longer needs; the answer is not waited for.
              const ending = transport instanceof StreamableHTTPClientTransport
                ? transport.terminateSession()
                : Promise.resolve()
              void ending.catch(() => undefined).finally(() => client.close().catch(() => undefined))
            }
          },
          catch: (error) => new McpUnavailable({ message: failureText(sdk, error, timeoutMs, secrets) })
        })
      })

    const discover = Effect.fn("McpServers.discover")(function*(organizationId: OrganizationId, config: McpConfig) {
      yield* Effect.annotateCurrentSpan({ host: new URL(config.url).host })
      return yield* withSession(organizationId, config, async ({ client, signal, timeoutMs }) => {
        const tools: Array<McpDiscoveredTool> = []
        let cursor: string | undefined
        for (let page = 0; page < MAX_CATALOG_PAGES && tools.length < MAX_CATALOG_TOOLS; page++) {
          const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: timeoutMs })
          for (const tool of listed.tools) {
            const kept = keptCatalogEntry(tool)
            if (kept !== null) tools.push(kept)
          }
          cursor = listed.nextCursor
          if (cursor === undefined) break
        }
        return tools.slice(0, MAX_CATALOG_TOOLS)
      })
    })

    const call = Effect.fn("McpServers.call")(
      function*(
        organizationId: OrganizationId,
        config: McpConfig,
        toolName: string,
        args: Readonly<Record<string, unknown>>
      ) {
        yield* Effect.annotateCurrentSpan({ host: new URL(config.url).host, mcp_tool: toolName })
        return yield* withSession(organizationId, config, async ({ client, signal, timeoutMs }, secrets) => {
          const result = await client.callTool({ name: toolName, arguments: { ...args } }, undefined, {
            signal,
            timeout: timeoutMs
          })
          return {
            text: scrub(mcpResultText(result as { content?: unknown; structuredContent?: unknown }), secrets),
            isError: result.isError === true
          }
        })
      }
    )

    return McpServers.of({ discover, call })
  })
)
