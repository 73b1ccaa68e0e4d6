import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import {
  errorJson,
  fetchRoutes,
  json,
  offline,
  pxRun,
  pxRunning,
  pxStatus,
} from '@/__tests__/fixtures'
import type { PerplexityStatus } from '@/api/perplexity'
import { MAX_POLLS, POLL_MS, usePerplexityStore } from '../perplexity'

beforeEach(() => {
  setActivePinia(createPinia())
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
})
afterEach(() => {
  usePerplexityStore().unfollow()
  vi.useRealTimers()
  vi.unstubAllGlobals()
})

/** Serve GET /api/perplexity/status from `answers` in turn (the last one repeats). */
function statusSequence(answers: PerplexityStatus[], extra = {}, calls: string[] = []) {
  let i = 0
  vi.stubGlobal(
    'fetch',
    fetchRoutes({
      'GET /api/perplexity/status': () => {
        calls.push('status')
        return json(answers[Math.min(i++, answers.length - 1)])
      },
      ...extra,
    }),
  )
  return calls
}

describe('perplexity store', () => {
  it('polls every 2 s while a sync runs and stops when it ends', async () => {
    const done = pxStatus({ last_run: pxRun(), threads: { synced: 12, deleted_upstream: 0 } })
    const calls = statusSequence([pxRunning(10, 1), pxRunning(10, 5), done])
    const px = usePerplexityStore()
    await px.follow()
    expect(px.running).toBe(true)
    expect(px.canSync).toBe(false)
    expect(px.status?.current?.counts.changed).toBe(1)

    await vi.advanceTimersByTimeAsync(POLL_MS)
    expect(calls).toHaveLength(2)
    expect(px.status?.current?.counts.changed).toBe(5)

    await vi.advanceTimersByTimeAsync(POLL_MS)
    expect(calls).toHaveLength(3)
    expect(px.running).toBe(false)
    expect(px.canSync).toBe(true)
    expect(px.status?.last_run?.counts.ingested).toBe(4)

    await vi.advanceTimersByTimeAsync(POLL_MS * 10)
    expect(calls).toHaveLength(3)
  })

  it('does not poll when idle, nor after unfollow', async () => {
    const calls = statusSequence([pxRunning()])
    const px = usePerplexityStore()
    await px.follow()
    px.unfollow()
    await vi.advanceTimersByTimeAsync(POLL_MS * 5)
    expect(calls).toHaveLength(1)

    statusSequence([pxStatus()])
    await px.follow()
    await vi.advanceTimersByTimeAsync(POLL_MS * 5)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('gives up after MAX_POLLS and follows again on refresh', async () => {
    const calls = statusSequence([pxRunning()])
    const px = usePerplexityStore()
    await px.follow()
    await vi.advanceTimersByTimeAsync(POLL_MS * (MAX_POLLS + 10))
    expect(calls).toHaveLength(MAX_POLLS + 1)
    expect(px.stalled).toBe(true)
    expect(vi.getTimerCount()).toBe(0)

    await px.refresh()
    expect(px.stalled).toBe(false)
    await vi.advanceTimersByTimeAsync(POLL_MS)
    expect(calls).toHaveLength(MAX_POLLS + 3)
  })

  it('starts a sync and follows it', async () => {
    const calls = statusSequence([pxStatus(), pxStatus({ last_run: pxRun() })], {
      'POST /api/perplexity/sync': () => json(pxRunning(), 202),
    })
    const px = usePerplexityStore()
    await px.follow()
    expect(px.canSync).toBe(true)
    await px.sync()
    expect(px.running).toBe(true)
    expect(px.syncError).toBeNull()
    await vi.advanceTimersByTimeAsync(POLL_MS)
    expect(calls).toHaveLength(2)
    expect(px.running).toBe(false)
    expect(px.status?.last_run?.outcome).toBe('ok')
  })

  it('keeps a 409 as a readable error and reads the status again', async () => {
    const noLogin = pxStatus({
      login: { ...pxStatus().login, saved: false, saved_at: null, valid: false },
    })
    const calls = statusSequence([noLogin], {
      'POST /api/perplexity/sync': () =>
        errorJson(
          409,
          'perplexity_login_required',
          'no saved Perplexity login; run `quire perplexity login` on the server',
        ),
    })
    const px = usePerplexityStore()
    await px.follow()
    await px.sync()
    expect(px.syncError).toBe(
      'no saved Perplexity login; run `quire perplexity login` on the server',
    )
    expect(px.starting).toBe(false)
    expect(calls).toHaveLength(2)
  })

  it('keeps the newest answer when a slow one arrives late', async () => {
    let release: (r: Response) => void = () => {}
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/perplexity/status?verify=true': () => new Promise((r) => (release = r)),
        'GET /api/perplexity/status': () =>
          json(pxStatus({ threads: { synced: 7, deleted_upstream: 0 } })),
      }),
    )
    const px = usePerplexityStore()
    const checking = px.verify()
    expect(px.verifying).toBe(true)
    await px.refresh()
    release(json(pxStatus({ threads: { synced: 1, deleted_upstream: 0 } })))
    await checking
    expect(px.verifying).toBe(false)
    expect(px.status?.threads.synced).toBe(7)
  })

  it('shows a failed read and keeps following the run', async () => {
    const calls = statusSequence([pxRunning()])
    const px = usePerplexityStore()
    await px.follow()
    vi.stubGlobal('fetch', offline)
    await vi.advanceTimersByTimeAsync(POLL_MS)
    expect(px.error).toBe('the server could not be reached')
    expect(px.running).toBe(true)

    statusSequence([pxStatus()], {}, calls)
    await vi.advanceTimersByTimeAsync(POLL_MS)
    expect(px.error).toBeNull()
    expect(px.running).toBe(false)
    expect(calls).toHaveLength(2)
  })
})
