import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { doc, errorJson, fetchRoutes, json, sse, streamResponse } from '@/__tests__/fixtures'
import type { Document } from '@/api/documents'
import type { Me } from '@/api/me'
import DocumentView from '../DocumentView.vue'

beforeEach(() => setActivePinia(createPinia()))
afterEach(() => vi.unstubAllGlobals())

const ALICE: Me = { mode: 'people', user: { id: 1, name: 'alice', admin: false } }

async function mountView(
  document: Document,
  me: Me,
  routes: Parameters<typeof fetchRoutes>[0] = {},
) {
  vi.stubGlobal(
    'fetch',
    fetchRoutes({
      'GET /api/me': () => json(me),
      'GET /api/documents/3': () => json(document),
      'GET /api/documents/3/pages': () => json({ pages: [] }),
      ...routes,
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

  it('keeps Delete apart from Re-ingest, in its own section that says what it removes', async () => {
    const w = await mountView(doc(3), { mode: 'single', user: null })
    const actions = w.get('.actions')
    expect(actions.text()).toContain('Re-ingest')
    expect(actions.text()).not.toContain('Delete')
    const zone = w.get('[data-testid="danger-zone"]')
    expect(zone.get('button.danger').text()).toBe('Delete this document')
    expect(zone.text()).toContain('the original where you keep it is not touched')
  })

  it('offers neither to a reader who cannot change the document', async () => {
    const w = await mountView(doc(3, { can_change: false }), { mode: 'single', user: null })
    expect(w.get('.actions').text()).not.toContain('Re-ingest')
    expect(w.find('[data-testid="danger-zone"]').exists()).toBe(false)
  })
})

describe('DocumentView cited pages', () => {
  const SINGLE: Me = { mode: 'single', user: null }
  const outcome = (n: number, status: string, over: Record<string, unknown> = {}) => ({
    n,
    url: `https://example.org/${n}`,
    title: null,
    status,
    document_id: status === 'refused' ? null : 10 + n,
    job_id: null,
    error: null,
    ...over,
  })

  it("adds a Perplexity thread's cited pages and lists each outcome as it comes", async () => {
    const refused = outcome(2, 'refused', {
      error: { status: 403, code: 'fetch_refused', message: '10.0.0.1 is a private address' },
    })
    const first = outcome(3, 'added', { title: 'A paper' })
    const events = sse([
      ['outcome', first],
      ['outcome', refused],
      ['outcome', outcome(1, 'unchanged')],
      [
        'done',
        {
          document_id: 3,
          outcomes: [outcome(1, 'unchanged'), refused, first],
          counts: { added: 1, updated: 0, unchanged: 1, refused: 1 },
        },
      ],
    ])
    let posted = 0
    const w = await mountView(doc(3, { kind: 'perplexity' }), SINGLE, {
      'POST /api/documents/3/sources/add': () => {
        posted++
        // Split inside an event: the list is read as a stream.
        return streamResponse([events.slice(0, 40), events.slice(40)])
      },
    })
    const button = w.get('[data-testid="add-sources"]')
    expect(button.text()).toBe('Add the cited pages to the library')
    await button.trigger('click')
    await flushPromises()
    expect(posted).toBe(1)
    const rows = w.findAll('[data-testid="source-outcome"]')
    expect(rows.map((r) => r.attributes('data-status'))).toEqual(['unchanged', 'refused', 'added'])
    expect(rows[1]!.text()).toContain('refused')
    expect(rows[1]!.text()).toContain('10.0.0.1 is a private address')
    expect(rows[1]!.find('a[href="/documents/12"]').exists()).toBe(false)
    expect(rows[2]!.get('a').text()).toBe('A paper')
    expect(rows[2]!.get('a').attributes('href')).toBe('https://example.org/3')
    expect(rows[2]!.find('a[href="/documents/13"]').exists()).toBe(true)
    expect(w.get('[data-testid="sources-summary"]').text()).toBe(
      'Done: 1 added, 1 unchanged, 1 refused',
    )
  })

  it('says why when the thread cites nothing', async () => {
    const w = await mountView(doc(3, { kind: 'perplexity' }), SINGLE, {
      'POST /api/documents/3/sources/add': () =>
        errorJson(
          400,
          'bad_input',
          'document 3 cites no web pages (its pages list no web sources)',
        ),
    })
    await w.get('[data-testid="add-sources"]').trigger('click')
    await flushPromises()
    expect(w.get('[data-testid="cited-pages"] [role="alert"]').text()).toBe(
      'document 3 cites no web pages (its pages list no web sources)',
    )
  })

  it('offers the action on Perplexity threads only', async () => {
    const w = await mountView(doc(3, { kind: 'pdf' }), SINGLE)
    expect(w.find('[data-testid="cited-pages"]').exists()).toBe(false)
  })
})
