import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { apiToken, setApiToken } from '@/api/auth'
import type { Me } from '@/api/me'
import { reloadPage } from '@/composables/reload'
import App from '../App.vue'
import { errorJson, fetchRoutes, json } from './fixtures'

vi.mock('@/composables/reload', () => ({ reloadPage: vi.fn() }))

beforeEach(() => {
  setActivePinia(createPinia())
  vi.clearAllMocks()
})
afterEach(() => {
  vi.unstubAllGlobals()
  setApiToken(null)
})

async function mountApp(me: Me | Response) {
  vi.stubGlobal(
    'fetch',
    fetchRoutes({ 'GET /api/me': () => (me instanceof Response ? me : json(me)) }),
  )
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [{ path: '/:any(.*)*', component: { template: '<div />' } }],
  })
  await router.push('/chat')
  const w = mount(App, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

describe('App header', () => {
  it('shows who is signed in to a team library, and (admin) for an admin', async () => {
    const w = await mountApp({ mode: 'people', user: { id: 1, name: 'alice', admin: false } })
    const who = w.get('[data-testid="signed-in-user"]')
    expect(who.text()).toBe('Signed in as alice')
    expect(w.find('[data-testid="sign-out"]').exists()).toBe(true)

    setActivePinia(createPinia())
    const admin = await mountApp({ mode: 'people', user: { id: 2, name: 'root', admin: true } })
    expect(admin.get('[data-testid="signed-in-user"]').text()).toBe('Signed in as root (admin)')
  })

  it('shows nothing new in the one-person Quire, nor when /api/me fails', async () => {
    const single = await mountApp({ mode: 'single', user: null })
    expect(single.find('[data-testid="signed-in-user"]').exists()).toBe(false)
    expect(single.find('[data-testid="sign-out"]').exists()).toBe(false)
    expect(single.text()).not.toContain('Signed in')

    setActivePinia(createPinia())
    const old = await mountApp(errorJson(404, 'not_found', 'Not Found'))
    expect(old.find('[data-testid="sign-out"]').exists()).toBe(false)
  })

  it('signs out: forgets the stored token and reloads the page', async () => {
    setApiToken('alice-token')
    const w = await mountApp({ mode: 'people', user: { id: 1, name: 'alice', admin: false } })
    expect(reloadPage).not.toHaveBeenCalled()
    await w.get('[data-testid="sign-out"]').trigger('click')
    expect(apiToken.value).toBeNull()
    expect(localStorage.getItem('quire.apiToken')).toBeNull()
    expect(reloadPage).toHaveBeenCalledTimes(1)
  })
})
