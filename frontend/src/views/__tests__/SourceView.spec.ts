import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { doc, fetchRoutes, json, page } from '@/__tests__/fixtures'
import SourceView from '../SourceView.vue'

afterEach(() => vi.unstubAllGlobals())

async function mountAt(url: string) {
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/library', component: { template: '<div />' } },
      { path: '/library/:id', name: 'document', component: { template: '<div />' } },
      { path: '/library/:id/pages/:page', name: 'source', component: SourceView },
    ],
  })
  await router.push(url)
  const w = mount(SourceView, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

describe('SourceView', () => {
  it('highlights the cited chunk, the quote and the matches on the right page', async () => {
    Element.prototype.scrollIntoView = vi.fn()
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { title: 'Tides' })),
        'GET /api/documents/3/pages/2': () => json(page()),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8&hl=4-8&quote=rises%20twice%20a%20day')
    expect(w.get('h1').text()).toBe('Tides')
    expect(w.text()).toContain('page 2 of 5')
    const passage = w
      .findAll('mark.passage')
      .map((m) => m.element.textContent)
      .join('')
    expect(passage).toBe('The tide rises twice a day near the harbor. Whales follow it.')
    expect(w.get('mark.hit').text()).toBe('tide')
    expect(w.get('mark.quote').text()).toBe('rises twice a day')
    expect(w.get('[data-testid="original"]').attributes('href')).toBe(
      '/api/documents/3/file#page=2',
    )
    expect(Element.prototype.scrollIntoView).toHaveBeenCalled()
  })

  it('links a Perplexity turn to its thread', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/5': () =>
          json(
            doc(5, {
              kind: 'perplexity',
              metadata: { url: 'https://www.perplexity.ai/search/x-1' },
            }),
          ),
        'GET /api/documents/5/pages/1': () =>
          json(page({ document_id: 5, page: 1, metadata: { urls: ['https://example.org/a'] } })),
      }),
    )
    const w = await mountAt('/library/5/pages/1')
    expect(w.get('a[href="https://www.perplexity.ai/search/x-1"]').text()).toContain(
      'Perplexity thread',
    )
    expect(w.get('[data-testid="original"]').attributes('href')).toBe('/api/documents/5/file')
    expect(w.find('a[href="https://example.org/a"]').exists()).toBe(true)
    expect(w.findAll('mark')).toHaveLength(0)
  })

  it('shows the API error for a missing page', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3)),
        'GET /api/documents/3/pages/99': () =>
          json(
            {
              error: {
                status: 404,
                code: 'not_found',
                message: 'document 3 has no page 99 (it has 5)',
              },
            },
            404,
          ),
      }),
    )
    const w = await mountAt('/library/3/pages/99')
    expect(w.get('[role="alert"]').text()).toBe('document 3 has no page 99 (it has 5)')
  })
})
