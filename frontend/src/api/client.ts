// The one way the app talks to the API: JSON in, JSON out, every error as an ApiError carrying
// the backend's error envelope ({"error": {status, code, message, detail}}).
import { authHeaders, tokenRequired } from './auth'
import type { components } from './schema'

export type Schemas = components['schemas']
export type ErrorBody = Schemas['ErrorBody']

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly detail: unknown

  constructor(body: ErrorBody) {
    super(body.message)
    this.name = 'ApiError'
    this.status = body.status
    this.code = body.code
    this.detail = body.detail
  }
}

/** Turn any response body into the error envelope, even when a proxy answered with HTML. */
export function errorFrom(status: number, text: string): ApiError {
  // Every failed request passes here: a 401 is the one place the app learns it needs a token.
  if (status === 401) tokenRequired.value = true
  try {
    const parsed = JSON.parse(text) as { error?: ErrorBody }
    if (parsed && typeof parsed.error?.message === 'string') return new ApiError(parsed.error)
  } catch {
    // not JSON: fall through
  }
  const message =
    status === 413
      ? 'the file is larger than the server accepts'
      : status === 0
        ? 'the server could not be reached'
        : `HTTP ${status}`
  return new ApiError({ status, code: status === 0 ? 'network_error' : 'http_error', message })
}

export async function request<T>(
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<T> {
  const { json, ...rest } = init
  const headers = new Headers({
    ...authHeaders(),
    ...Object.fromEntries(new Headers(rest.headers)),
  })
  headers.set('Accept', 'application/json')
  if (json !== undefined) headers.set('Content-Type', 'application/json')
  let resp: Response
  try {
    resp = await fetch(path, {
      ...rest,
      headers,
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    })
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err
    throw errorFrom(0, '')
  }
  if (!resp.ok) throw errorFrom(resp.status, await resp.text())
  if (resp.status === 204) return undefined as T
  return (await resp.json()) as T
}

/** A readable message for anything thrown at the UI. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message
  if (err instanceof Error) return err.message
  return String(err)
}
