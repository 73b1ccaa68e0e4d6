import { afterEach, describe, expect, it, vi } from 'vitest'

import {
  chatRequest,
  chatSse,
  doneEvent,
  errorJson,
  job,
  json,
  pathOf,
  sse,
  streamResponse,
} from '@/__tests__/fixtures'
import { apiToken, setApiToken, tokenRequired } from '../auth'
import { streamChat } from '../chat'
import { listDocuments } from '../documents'
import { watchJob } from '../jobs'
import { uploadFile } from '../upload'

afterEach(() => {
  vi.unstubAllGlobals()
  setApiToken(null)
})

describe('the API token', () => {
  it('is sent as a bearer header by requests, both streams and uploads', async () => {
    setApiToken('  s3cret ')
    expect(apiToken.value).toBe('s3cret')
    expect(localStorage.getItem('quire.apiToken')).toBe('s3cret')
    const auth: Record<string, string | null> = {}
    vi.stubGlobal('fetch', async (req: Request) => {
      auth[pathOf(req)] = req.headers.get('Authorization')
      if (pathOf(req) === '/api/chat') return streamResponse([chatSse([doneEvent()])])
      if (pathOf(req) === '/api/jobs/2/events')
        return streamResponse([sse([['done', job({ id: 2, status: 'done' })]])])
      return json({ documents: [] })
    })
    await listDocuments()
    await streamChat(chatRequest(), () => {})
    await new Promise((resolve) => watchJob(2, resolve))
    const headers: Record<string, string> = {}
    const xhr = {
      upload: {},
      open() {},
      send() {},
      setRequestHeader(k: string, v: string) {
        headers[k] = v
      },
    }
    uploadFile(new File(['x'], 'a.txt'), () => {}, {
      xhrFactory: () => xhr as unknown as XMLHttpRequest,
    })
    expect(auth).toEqual({
      '/api/documents': 'Bearer s3cret',
      '/api/chat': 'Bearer s3cret',
      '/api/jobs/2/events': 'Bearer s3cret',
    })
    expect(headers.Authorization).toBe('Bearer s3cret')
  })

  it('is asked for when the API answers 401, and forgotten when cleared', async () => {
    vi.stubGlobal('fetch', async () => errorJson(401, 'unauthorized', 'an API token is required'))
    await expect(listDocuments()).rejects.toMatchObject({ status: 401 })
    expect(tokenRequired.value).toBe(true)
    setApiToken('x')
    expect(tokenRequired.value).toBe(false)
    setApiToken('')
    expect(apiToken.value).toBeNull()
    expect(localStorage.getItem('quire.apiToken')).toBeNull()
  })
})
