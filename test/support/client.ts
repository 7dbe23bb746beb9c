interface Reply<T = any> {
  readonly status: number
  readonly body: T
  readonly headers: Headers
}

export interface Credentials {
  readonly token?: string
  readonly apiKey?: string
}

/** A thin JSON client over fetch, so tests read like the HTTP calls a user makes. */
export const client = (baseUrl: string) => {
  const call = async <T = any>(
    method: string,
    path: string,
    options: Credentials & { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}
  ): Promise<Reply<T>> => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    if (options.apiKey) headers["x-api-key"] = options.apiKey
    let body: string | undefined
    if (options.rawBody !== undefined) body = options.rawBody
    else if (options.body !== undefined) body = JSON.stringify(options.body)
    if (body !== undefined) headers["content-type"] ??= "application/json"
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body: body ?? null })
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed as T, headers: response.headers }
  }
  return {
    get: <T = any>(path: string, options?: Credentials & { headers?: Record<string, string> }) =>
      call<T>("GET", path, options),
    post: <T = any>(
      path: string,
      body?: unknown,
      options?: Credentials & { headers?: Record<string, string>; rawBody?: string }
    ) => call<T>("POST", path, { ...options, body }),
    put: <T = any>(path: string, body?: unknown, options?: Credentials) => call<T>("PUT", path, { ...options, body }),
    patch: <T = any>(path: string, body?: unknown, options?: Credentials) =>
      call<T>("PATCH", path, { ...options, body }),
    delete: <T = any>(path: string, options?: Credentials) => call<T>("DELETE", path, options),
    call
  }
}

export type Client = ReturnType<typeof client>
