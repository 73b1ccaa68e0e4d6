import { afterEach, describe, expect, it, vi } from 'vitest'

import { job, json, pathOf, sse, streamResponse } from '@/__tests__/fixtures'
import type { Job } from '../documents'
import { watchJob } from '../jobs'

afterEach(() => {
  vi.unstubAllGlobals()
  vi.useRealTimers()
})

const flush = () => new Promise((r) => setTimeout(r, 0))

describe('watchJob', () => {
  it('follows the SSE stream until done', async () => {
    const fetch = vi.fn<(req: Request) => Promise<Response>>(async () =>
      streamResponse([
        sse([
          ['progress', job({ progress: 0.4, stage: 'embed' })],
          ['done', job({ status: 'done', progress: 1, stage: 'done' })],
        ]),
      ]),
    )
    vi.stubGlobal('fetch', fetch)
    const seen: Job[] = []
    watchJob(1, (j) => seen.push(j))
    await vi.waitFor(() => expect(seen).toHaveLength(2))
    expect(seen.map((j) => j.progress)).toEqual([0.4, 1])
    expect(fetch).toHaveBeenCalledTimes(1)
    const req = fetch.mock.calls[0]![0]
    expect(pathOf(req)).toBe('/api/jobs/1/events')
    expect(req.headers.get('Accept')).toBe('text/event-stream')
  })

  it('falls back to polling when the stream fails', async () => {
    vi.useFakeTimers()
    const states = [job({ progress: 0.5 }), job({ status: 'failed', error: 'not a PDF' })]
    const fetch = vi.fn(async (req: Request) =>
      pathOf(req).endsWith('/events')
        ? new Response('bad gateway', { status: 502 })
        : json(states.shift()),
    )
    vi.stubGlobal('fetch', fetch)
    const seen: Job[] = []
    watchJob(1, (j) => seen.push(j), 100)
    await vi.advanceTimersByTimeAsync(350)
    expect(seen.map((j) => j.status)).toEqual(['running', 'failed'])
    expect(seen[1]!.error).toBe('not a PDF')
    expect(fetch).toHaveBeenCalledTimes(3)
  })

  it('stops on request', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => streamResponse([sse([['progress', job({ progress: 0.1 })]])])),
    )
    const seen: Job[] = []
    const stop = watchJob(1, (j) => seen.push(j), 10)
    stop()
    await flush()
    await new Promise((r) => setTimeout(r, 30))
    expect(seen.length).toBeLessThanOrEqual(1)
  })
})
