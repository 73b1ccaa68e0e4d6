import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { errorJson, fetchRoutes, json } from '@/__tests__/fixtures'
import { apiToken, setApiToken, tokenRequired } from '@/api/auth'
import { reloadPage } from '@/composables/reload'
import { useMeStore } from '../me'

vi.mock('@/composables/reload', () => ({ reloadPage: vi.fn() }))

beforeEach(() => {
  setActivePinia(createPinia())
  vi.clearAllMocks()
})
afterEach(() => {
  vi.unstubAllGlobals()
  setApiToken(null)
  tokenRequired.value = false
})

describe('me store', () => {
  it('reads /api/me once however many ask', async () => {
    const seen = vi.fn(() => json({ mode: 'people', user: { id: 1, name: 'ada', admin: false } }))
    vi.stubGlobal('fetch', fetchRoutes({ 'GET /api/me': seen }))
    const store = useMeStore()
    expect(store.loaded).toBe(false)
    await Promise.all([store.load(), store.load()])
    await store.load()
    expect(seen).toHaveBeenCalledTimes(1)
    expect(store.loaded).toBe(true)
    expect(store.people).toBe(true)
    expect(store.user).toEqual({ id: 1, name: 'ada', admin: false })
  })

  it('is the one-person Quire when the server has no /api/me', async () => {
    vi.stubGlobal('fetch', async () => errorJson(404, 'not_found', 'Not Found'))
    const store = useMeStore()
    await store.load()
    expect(store.loaded).toBe(true)
    expect(store.people).toBe(false)
    expect(store.user).toBeNull()
  })

  it('signs out by forgetting the token and loading the page again', () => {
    setApiToken('ada-token')
    useMeStore().signOut()
    expect(apiToken.value).toBeNull()
    expect(localStorage.getItem('quire.apiToken')).toBeNull()
    expect(reloadPage).toHaveBeenCalledTimes(1)
  })
})
