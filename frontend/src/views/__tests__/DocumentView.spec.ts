import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { doc, fetchRoutes, json } from '@/__tests__/fixtures'
import type { Document } from '@/api/documents'
import type { Me } from '@/api/me'
import DocumentView from '../DocumentView.vue'

beforeEach(() => setActivePinia(createPinia()))
afterEach(() => vi.unstubAllGlobals())

const ALICE: Me = { mode: 'people', user: { id: 1, name: 'alice', admin: false } }

async function mountView(document: Document, me: Me) {
  vi.stubGlobal(
    'fetch',
    fetchRoutes({
      'GET /api/me': () => json(me),
      'GET /api/documents/3': () => json(document),
      'GET /api/documents/3/pages': () => json({ pages: [] }),
    }),
  )
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/documents/:id', name: 'document', component: DocumentView },
      { path: '/:any(.*)*', component: { template: '<div />' } },
    ],
  })
  await router.push('/documents/3')
  const w = mount(DocumentView, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

describe('DocumentView access', () => {
  it("shows a private document's owner and badge in a team library", async () => {
    const w = await mountView(doc(3, { visibility: 'private', owner: 'alice' }), ALICE)
    expect(w.get('[data-testid="owner"]').text()).toBe('alice')
    const badge = w.get('[data-testid="private-badge"]')
    expect(badge.text()).toBe('private')
    expect(badge.element.closest('dd')!.previousElementSibling!.textContent).toBe('Visible to')
  })

  it("shows a team document's owner, with no badge", async () => {
    const w = await mountView(doc(3, { visibility: 'team', owner: 'bob' }), ALICE)
    expect(w.get('[data-testid="owner"]').text()).toBe('bob')
    expect(w.find('[data-testid="private-badge"]').exists()).toBe(false)
    expect(w.get('dl.facts').text()).toContain('the whole team')
  })

  it('shows neither owner nor visibility in the one-person Quire', async () => {
    const w = await mountView(doc(3), { mode: 'single', user: null })
    expect(w.get('h1').text()).toBe('Doc 3')
    expect(w.find('[data-testid="owner"]').exists()).toBe(false)
    expect(w.find('[data-testid="private-badge"]').exists()).toBe(false)
    expect(w.get('dl.facts').text()).not.toContain('Visible to')
  })
})
