import { afterEach, describe, expect, it, vi } from 'vitest'

import { errorJson, json, streamResponse } from '@/__tests__/fixtures'
import { apiToken, setApiToken, tokenRequired } from '../auth'
import { streamChat } from '../chat'
import { request } from '../client'
import { uploadFile } from '../upload'

afterEach(() => {
  vi.unstubAllGlobals()
  setApiToken(null)
})

describe('the API token', () => {
  it('is sent as a bearer header by fetch, the chat stream and uploads', async () => {
    setApiToken('  s3cret ')
    expect(apiToken.value).toBe('s3cret')
    expect(localStorage.getItem('quire.apiToken')).toBe('s3cret')
    const auth: (string | null)[] = []
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      auth.push(new Headers(init.headers).get('Authorization'))
      return url === '/api/chat' ? streamResponse(['event: done\ndata: {}\n\n']) : json({})
    })
    await request('/api/documents')
    await streamChat({ message: 'q' }, () => {})
    const headers: Record<string, string> = {}
    const xhr = {
      upload: {},
      open() {},
      send() {},
      setRequestHeader(k: string, v: string) {
        headers[k] = v
      },
    }
    uploadFile(
      new File(['x'], 'a.txt'),
      () => {},
      () => xhr as unknown as XMLHttpRequest,
    )
    expect(auth).toEqual(['Bearer s3cret', 'Bearer s3cret'])
    expect(headers.Authorization).toBe('Bearer s3cret')
  })

  it('is asked for when the API answers 401, and forgotten when cleared', async () => {
    vi.stubGlobal('fetch', async () => errorJson(401, 'unauthorized', 'an API token is required'))
    await expect(request('/api/documents')).rejects.toMatchObject({ status: 401 })
    expect(tokenRequired.value).toBe(true)
    setApiToken('x')
    expect(tokenRequired.value).toBe(false)
    setApiToken('')
    expect(apiToken.value).toBeNull()
    expect(localStorage.getItem('quire.apiToken')).toBeNull()
  })
})
