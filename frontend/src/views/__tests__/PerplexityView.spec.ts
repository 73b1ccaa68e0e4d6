import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import {
  errorJson,
  fetchRoutes,
  json,
  pxRun,
  pxRunning,
  pxStatus,
  syncCounts,
} from '@/__tests__/fixtures'
import type { PerplexityStatus } from '@/api/perplexity'
import { POLL_MS } from '@/stores/perplexity'
import PerplexityView from '../PerplexityView.vue'

beforeEach(() => {
  setActivePinia(createPinia())
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
})
afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
})

async function mountView() {
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [{ path: '/:any(.*)*', component: { template: '<div />' } }],
  })
  const w = mount(PerplexityView, { global: { plugins: [router] }, attachTo: document.body })
  await flushPromises()
  return w
}

function serve(status: () => PerplexityStatus, extra = {}) {
  const get = vi.fn(() => json(status()))
  vi.stubGlobal('fetch', fetchRoutes({ 'GET /api/perplexity/status': get, ...extra }))
  return get
}

const count = (w: Awaited<ReturnType<typeof mountView>>, key: string) =>
  w.get(`[data-testid="last-run"] ~ div [data-count="${key}"] dd`).text()

describe('PerplexityView', () => {
  it('shows the login, the last run with its counts and errors, and the import hint', async () => {
    serve(() =>
      pxStatus({
        last_run: pxRun({
          counts: syncCounts({ listed: 12, changed: 4, exported: 4, ingested: 3, failed: 1 }),
          errors: [{ slug: 'tides-1', title: 'Tides', error: 'HTTP 500 after 4 retries' }],
        }),
        threads: { synced: 11, deleted_upstream: 2 },
      }),
    )
    const w = await mountView()
    expect(w.get('[data-testid="login-state"]').text()).toBe('valid as me@example.org')
    expect(w.find('[data-testid="login-hint"]').exists()).toBe(false)
    expect(w.get('[data-testid="sync"]').attributes('disabled')).toBeUndefined()
    expect(w.get('[data-testid="sync-state"]').text()).toBe(
      '11 threads synced, 2 deleted on Perplexity (kept here)',
    )
    expect(w.get('[data-testid="last-run"]').text()).toContain('finished')
    expect(w.get('[data-testid="last-run"]').text()).toContain('took 1 min 15 s')
    expect(count(w, 'listed')).toBe('12')
    expect(count(w, 'changed')).toBe('4')
    expect(count(w, 'exported')).toBe('4')
    expect(count(w, 'ingested')).toBe('3')
    expect(count(w, 'failed')).toBe('1')
    const failed = w.get('[data-testid="run-errors"] a')
    expect(failed.text()).toBe('Tides')
    expect(failed.attributes('href')).toBe('https://www.perplexity.ai/search/tides-1')
    expect(w.text()).toContain('HTTP 500 after 4 retries')
    expect(w.text()).toContain('quire perplexity import DIR')
    expect(w.find('a[href="/upload"]').exists()).toBe(true)
    expect(w.find('[data-testid="last-run-message"]').exists()).toBe(false)
    w.unmount()
  })

  it('tells how to log in when no login is saved', async () => {
    serve(() =>
      pxStatus({
        login: {
          saved: false,
          saved_at: null,
          valid: false,
          checked_at: null,
          expires: null,
          user: null,
        },
        last_run: pxRun({
          outcome: 'perplexity_login_required',
          message: 'the saved Perplexity login has expired; run `quire perplexity login`',
        }),
      }),
    )
    const w = await mountView()
    expect(w.get('[data-testid="login-state"]').text()).toBe('not saved')
    expect(w.get('[data-testid="login-hint"] code').text()).toBe('quire perplexity login')
    expect(w.text()).not.toContain('Check login')
    // Sync now is there, disabled, saying why.
    expect(w.get('[data-testid="sync"]').attributes('disabled')).toBeDefined()
    expect(w.get('[data-testid="sync-state"]').text()).toContain('No login saved yet')
    expect(w.get('[data-testid="last-run"] .badge').text()).toBe('login needed')
    expect(w.get('[data-testid="last-run-message"] code').text()).toBe('quire perplexity login')
    w.unmount()
  })

  it('disables Sync now while a run goes on, shows its progress and stops polling at the end', async () => {
    let answer = pxRunning(10, 3)
    const get = serve(() => answer)
    const w = await mountView()
    const button = () => w.get('[data-testid="sync"]')
    expect(button().attributes('disabled')).toBeDefined()
    expect(button().text()).toBe('Syncing…')
    expect(w.get('[data-testid="sync-state"]').text()).toBe('Sync running')
    expect(w.get('[data-testid="progress"]').text()).toContain('3 of 10 threads')
    expect(w.get('[data-testid="progress"]').text()).toContain('Why is the sky blue')
    expect(w.get('progress').attributes('value')).toBe('3')
    expect(w.text()).toContain('No sync has run yet.')

    answer = pxStatus({ last_run: pxRun(), threads: { synced: 12, deleted_upstream: 0 } })
    await vi.advanceTimersByTimeAsync(POLL_MS)
    await flushPromises()
    expect(get).toHaveBeenCalledTimes(2)
    expect(button().attributes('disabled')).toBeUndefined()
    expect(button().text()).toBe('Sync now')
    expect(w.find('[data-testid="progress"]').exists()).toBe(false)
    expect(w.get('[data-testid="last-run"]').text()).toContain('finished')

    await vi.advanceTimersByTimeAsync(POLL_MS * 5)
    expect(get).toHaveBeenCalledTimes(2)
    w.unmount()
  })

  it('starts a sync from the button and stops polling when the page is left', async () => {
    let answer = pxStatus()
    const get = serve(() => answer, {
      'POST /api/perplexity/sync': () => {
        answer = pxRunning(0, 0)
        return json(answer, 202)
      },
    })
    const w = await mountView()
    await w.get('[data-testid="sync"]').trigger('click')
    await flushPromises()
    expect(w.get('[data-testid="sync"]').attributes('disabled')).toBeDefined()
    expect(w.get('[data-testid="progress"]').text()).toContain('Listing threads')
    expect(w.get('progress').attributes('value')).toBeUndefined()
    await vi.advanceTimersByTimeAsync(POLL_MS)
    expect(get).toHaveBeenCalledTimes(2)
    w.unmount()
    await vi.advanceTimersByTimeAsync(POLL_MS * 5)
    expect(get).toHaveBeenCalledTimes(2)
  })

  it('shows a 409 as a readable error, the command as code', async () => {
    serve(() => pxStatus(), {
      'POST /api/perplexity/sync': () =>
        errorJson(
          409,
          'perplexity_sync_running',
          'a Perplexity sync is already running; start it again with `quire perplexity sync`',
        ),
    })
    const w = await mountView()
    await w.get('[data-testid="sync"]').trigger('click')
    await flushPromises()
    const alert = w.get('[data-testid="sync-error"]')
    expect(alert.attributes('role')).toBe('alert')
    expect(alert.text()).toBe(
      'a Perplexity sync is already running; start it again with quire perplexity sync',
    )
    expect(alert.get('code').text()).toBe('quire perplexity sync')
    w.unmount()
  })
})
