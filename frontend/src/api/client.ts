// The one way the app talks to the API. Every request (JSON, the SSE streams, original files)
// goes through apiFetch, which sends the API token and throws every failure as an ApiError
// carrying the backend's error envelope ({"error": {status, code, message, detail}}); `client`
// is the typed client over it, so a path's parameters, body and response come from schema.d.ts:
//
//   const doc = await bodyOf(
//     client.GET('/api/documents/{document_id}', { params: { path: { document_id: 3 } } }),
//   )
import createClient from 'openapi-fetch'

import { authHeaders, tokenRequired } from './auth'
import type { components, paths } from './schema'

export type Schemas = components['schemas']
export type ErrorBody = Schemas['ErrorBody']

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly detail: unknown

  /** ``detail`` may be left out by errors the app makes itself (network, aborts). */
  constructor(body: Omit<ErrorBody, 'detail'> & { detail?: unknown }) {
    super(body.message)
    this.name = 'ApiError'
    this.status = body.status
    this.code = body.code
    this.detail = body.detail ?? null
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

/** The user stopped the request: not an error to show. */
export function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError'
}

/** Send a request with the API token; a refusal or an unreachable server throws an ApiError. */
export async function apiFetch(input: Request | string): Promise<Response> {
  const request = typeof input === 'string' ? new Request(new URL(input, location.origin)) : input
  for (const [name, value] of Object.entries(authHeaders())) request.headers.set(name, value)
  let resp: Response
  try {
    resp = await fetch(request)
  } catch (err) {
    if (isAbort(err)) throw err
    throw errorFrom(0, '')
  }
  if (!resp.ok) throw errorFrom(resp.status, await resp.text())
  return resp
}

export const client = createClient<paths>({
  // Absolute: a Request built outside a page (Vitest) needs it; the same URLs as "/api/...".
  baseUrl: location.origin,
  fetch: apiFetch,
  headers: { Accept: 'application/json' },
})

/** The body of a successful call through `client` (apiFetch has thrown every failure). */
export async function bodyOf<T>(
  call: Promise<{ data?: T; response: Response }>,
): Promise<NonNullable<T>> {
  const { data, response } = await call
  // No body where one was due (an empty answer from a proxy) fails like any other answer.
  if (data === undefined || data === null) throw errorFrom(response.status, '')
  return data
}

/** A readable message for anything thrown at the UI. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message
  if (err instanceof Error) return err.message
  return String(err)
}
