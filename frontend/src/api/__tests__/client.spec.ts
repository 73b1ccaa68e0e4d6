import { afterEach, describe, expect, it, vi } from 'vitest'

import { doc, errorJson, fetchRoutes, json, offline, pathOf } from '@/__tests__/fixtures'
import { setApiToken, tokenRequired } from '../auth'
import { ApiError, apiFetch, bodyOf, client, errorFrom } from '../client'
import { deleteDocument } from '../documents'

afterEach(() => {
  vi.unstubAllGlobals()
  setApiToken(null)
  tokenRequired.value = false
})

const getDocument3 = () =>
  bodyOf(client.GET('/api/documents/{document_id}', { params: { path: { document_id: 3 } } }))

describe('the typed client', () => {
  it('fills the path from its parameters, returns the body, and nothing for 204', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { title: 'Tides' })),
        'DELETE /api/documents/3': () => json(null, 204),
      }),
    )
    expect((await getDocument3()).title).toBe('Tides')
    await expect(deleteDocument(3)).resolves.toBeUndefined()
  })

  it('sends the API token and maps the error envelope to an ApiError', async () => {
    setApiToken('s3cret')
    const seen: Request[] = []
    vi.stubGlobal('fetch', async (req: Request) => {
      seen.push(req)
      return errorJson(404, 'not_found', 'document 3 does not exist')
    })
    const err = await getDocument3().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({
      status: 404,
      code: 'not_found',
      message: 'document 3 does not exist',
    })
    expect(pathOf(seen[0]!)).toBe('/api/documents/3')
    expect(seen[0]!.headers.get('Authorization')).toBe('Bearer s3cret')
    expect(seen[0]!.headers.get('Accept')).toBe('application/json')
  })

  it('asks for the token on a 401', async () => {
    vi.stubGlobal('fetch', async () => errorJson(401, 'unauthorized', 'an API token is required'))
    await expect(getDocument3()).rejects.toMatchObject({ status: 401, code: 'unauthorized' })
    expect(tokenRequired.value).toBe(true)
  })

  it('makes a readable error from non-JSON answers, empty bodies and network failures', async () => {
    expect(errorFrom(413, '<html>Request Entity Too Large</html>').message).toMatch(/larger/)
    vi.stubGlobal('fetch', async () => new Response('<html>Bad Gateway</html>', { status: 502 }))
    await expect(getDocument3()).rejects.toMatchObject({ code: 'http_error', message: 'HTTP 502' })
    vi.stubGlobal('fetch', async () => new Response('', { status: 200 }))
    await expect(getDocument3()).rejects.toMatchObject({ code: 'http_error', message: 'HTTP 200' })
    vi.stubGlobal('fetch', offline)
    const err = (await getDocument3().catch((e: unknown) => e)) as ApiError
    expect(err).toBeInstanceOf(ApiError)
    expect(err.code).toBe('network_error')
    expect(err.message).toBe('the server could not be reached')
  })

  it('lets a stopped request through as an AbortError', async () => {
    vi.stubGlobal(
      'fetch',
      (req: Request) =>
        new Promise<Response>((_resolve, reject) =>
          req.signal.addEventListener('abort', () =>
            reject(new DOMException('aborted', 'AbortError')),
          ),
        ),
    )
    const controller = new AbortController()
    const call = client.GET('/api/documents', { signal: controller.signal })
    controller.abort()
    const err = await call.catch((e: unknown) => e)
    expect(err).not.toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ name: 'AbortError' })
  })

  it('fetches any /api/ path the same way (original files)', async () => {
    setApiToken('s3cret')
    const auth: (string | null)[] = []
    vi.stubGlobal('fetch', async (req: Request) => {
      auth.push(req.headers.get('Authorization'))
      return pathOf(req) === '/api/documents/3/file' ? new Response('%PDF') : json({}, 404)
    })
    expect(await (await apiFetch('/api/documents/3/file')).text()).toBe('%PDF')
    await expect(apiFetch('/api/documents/4/file')).rejects.toMatchObject({ code: 'http_error' })
    expect(auth).toEqual(['Bearer s3cret', 'Bearer s3cret'])
  })
})
