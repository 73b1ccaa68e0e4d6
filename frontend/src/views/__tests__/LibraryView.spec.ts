import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { doc, fetchRoutes, json, localName } from '@/__tests__/fixtures'
import LibraryView from '../LibraryView.vue'

beforeEach(() => setActivePinia(createPinia()))
afterEach(() => vi.unstubAllGlobals())

async function mountView() {
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/documents/:id', name: 'document', component: { template: '<div />' } },
      { path: '/:any(.*)*', component: { template: '<div />' } },
    ],
  })
  const w = mount(LibraryView, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

describe('LibraryView', () => {
  it("shows each document's language as a named badge, and nothing when undetected", async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents': () =>
          json({
            documents: [
              doc(1, { language: 'ja' }),
              doc(2, { language: 'zh-Hant' }),
              doc(3, { language: null }),
            ],
          }),
      }),
    )
    const w = await mountView()
    const badge = (id: number) => w.find(`[data-doc="${id}"] [data-testid="language"]`)
    expect(badge(1).text()).toBe(localName('ja'))
    expect(badge(1).attributes('title')).toBe('ja')
    expect(badge(2).text()).toBe(localName('zh-Hant'))
    expect(badge(2).attributes('title')).toBe('zh-Hant')
    expect(badge(3).exists()).toBe(false)
  })

  it('lets a right-to-left title set its own direction', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents': () =>
          json({ documents: [doc(1, { title: 'مقدمة في الفلسفة', language: 'ar' })] }),
      }),
    )
    const w = await mountView()
    const title = w.get('[data-doc="1"] .title a')
    expect(title.text()).toBe('مقدمة في الفلسفة')
    expect(title.attributes('dir')).toBe('auto')
    expect(w.get('[data-doc="1"] .title .muted').attributes('dir')).toBe('auto')
  })
})
