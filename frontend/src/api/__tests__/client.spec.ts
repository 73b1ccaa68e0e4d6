import { afterEach, describe, expect, it, vi } from 'vitest'

import { errorJson, json, offline } from '@/__tests__/fixtures'
import { ApiError, errorFrom, request } from '../client'

afterEach(() => vi.unstubAllGlobals())

describe('request', () => {
  it('returns JSON and nothing for 204', async () => {
    vi.stubGlobal('fetch', async (url: string) =>
      url === '/a' ? json({ ok: 1 }) : json(null, 204),
    )
    expect(await request('/a')).toEqual({ ok: 1 })
    expect(await request('/b', { method: 'DELETE' })).toBeUndefined()
  })

  it('throws the error envelope as an ApiError', async () => {
    vi.stubGlobal('fetch', async () => errorJson(415, 'unsupported_type', 'not a PDF'))
    await expect(request('/x')).rejects.toMatchObject({
      status: 415,
      code: 'unsupported_type',
      message: 'not a PDF',
    })
  })

  it('makes a readable error from non-JSON answers and network failures', async () => {
    expect(errorFrom(413, '<html>Request Entity Too Large</html>').message).toMatch(/larger/)
    vi.stubGlobal('fetch', offline)
    const err = (await request('/x').catch((e) => e)) as ApiError
    expect(err).toBeInstanceOf(ApiError)
    expect(err.code).toBe('network_error')
  })
})
