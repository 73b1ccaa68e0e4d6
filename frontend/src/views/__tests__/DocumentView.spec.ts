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
      'GET /api/documents/3/pages': () => json({ document_id: 3, pages: [], outline: [] }),
      ...routes,
    }),
  )
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/documents/:id', name: 'document', component: DocumentView },
      { path: '/library/:id/pages/:page', name: 'source', component: { template: '<div />' } },
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

describe('DocumentView in plain words', () => {
  const thinkComplexity = doc(3, {
    page_count: 246,
    chunk_count: 1032,
    metadata: {
      page_count: 246,
      producer: 'pdfTeX-1.40.16',
      rebuilt_xref: true,
      outline_entries: 127,
      page_labels: true,
      ocr_pages: [6, 7],
      ocr_languages: { eng: [6, 7] },
    },
  })
  const brief = (page: number, label: string | null, place: string) => ({
    kind: 'pdf' as const,
    page,
    page_label: label,
    heading_path: '',
    chars: 900,
    source: 'text_layer',
    place,
    section: '',
  })
  const pages = [
    brief(12, 'xi', 'p. xi (PDF p. 12)'),
    brief(18, '1', 'p. 1 (PDF p. 18)'),
    brief(62, '45', 'p. 45 (PDF p. 62)'),
    brief(45, '28', 'p. 28 (PDF p. 45)'),
  ]
  const outline = [
    { title: 'Preface', level: 1, page: 12, place: 'p. xi (PDF p. 12)' },
    { title: 'Complexity Science', level: 1, page: 18, place: 'p. 1 (PDF p. 18)' },
    { title: 'Paradigm shift?', level: 2, page: 20, place: 'p. 3 (PDF p. 20)' },
  ]

  async function mountBook(listed = { document_id: 3, pages, outline }) {
    const w = await mountView(
      thinkComplexity,
      { mode: 'single', user: null },
      {
        'GET /api/documents/3/pages': () => json(listed),
      },
    )
    return w
  }

  it('shows labelled facts and no internal keys', async () => {
    const w = await mountBook()
    const text = w.get('dl.facts').text()
    expect(w.get('[data-testid="size"]').text()).toBe('246 pages · 1,032 passages')
    const facts = Object.fromEntries(
      w.findAll('dl.facts dt').map((dt) => [dt.text(), dt.element.nextElementSibling?.textContent]),
    )
    expect(facts['Repaired']).toBe("the file's cross-reference table was rebuilt")
    expect(facts['Made with']).toBe('pdfTeX-1.40.16')
    expect(facts['Read by OCR']).toContain('2 pages')
    expect(text).toContain('246 pages')
    for (const key of ['page_count', 'rebuilt_xref', 'outline_entries', 'page_labels', 'ocr_']) {
      expect(w.text()).not.toContain(key)
    }
  })

  it('lists the outline as the page list, each entry linked with its place', async () => {
    const w = await mountBook()
    const entries = w.findAll('[data-testid="outline"] li')
    expect(
      entries.map((li) => [li.get('a').text(), li.get('[data-testid="place"]').text()]),
    ).toEqual([
      ['Preface', 'p. xi (PDF p. 12)'],
      ['Complexity Science', 'p. 1 (PDF p. 18)'],
      ['Paradigm shift?', 'p. 3 (PDF p. 20)'],
    ])
    expect(entries[2]!.get('a').attributes('href')).toBe('/library/3/pages/20')
    expect(w.find('[data-testid="page-grid"]').exists()).toBe(false)
  })

  it('falls back to a compact paged list of places without an outline', async () => {
    const many = Array.from({ length: 130 }, (_, i) => brief(i + 1, null, `p. ${i + 1}`))
    const w = await mountBook({ document_id: 3, pages: many, outline: [] })
    const links = () => w.findAll('[data-testid="page-grid"] a')
    expect(links()).toHaveLength(60)
    expect(links()[0]!.text()).toBe('p. 1')
    await w
      .findAll('button')
      .find((b) => b.text().startsWith('Later'))!
      .trigger('click')
    expect(links()[0]!.text()).toBe('p. 61')
  })

  it('jumps to a page by its printed label, or by its place in the file', async () => {
    const w = await mountBook()
    const router = w.vm.$router
    await w.get('#jump-to').setValue('45')
    await w.get('[data-testid="jump"]').trigger('submit')
    await flushPromises()
    expect(router.currentRoute.value.fullPath).toBe('/library/3/pages/62')
    await router.push('/documents/3')
    await w.get('#jump-to').setValue('PDF p. 45')
    await w.get('[data-testid="jump"]').trigger('submit')
    await flushPromises()
    expect(router.currentRoute.value.fullPath).toBe('/library/3/pages/45')
    await router.push('/documents/3')
    await w.get('#jump-to').setValue('cxx')
    await w.get('[data-testid="jump"]').trigger('submit')
    await flushPromises()
    expect(w.get('#jump-error').text()).toContain('No page “cxx”')
  })
})
