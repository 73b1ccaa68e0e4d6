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
  it('shows a document searchable by keywords with its embedding progress', async () => {
    const job = { id: 7, status: 'running', stage: 'embed', progress: 0.79, stage_progress: 0.4 }
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents': () =>
          json({ documents: [doc(1, { status: 'searchable', job }), doc(2)] }),
      }),
    )
    const w = await mountView()
    const rows = w.findAll('tbody tr')
    expect(rows[0]!.find('[data-testid="searchable"]').text()).toBe(
      'searchable by keywords · embedding 40%',
    )
    expect(rows[0]!.find('progress').attributes('value')).toBe('0.4')
    expect(rows[1]!.find('[data-testid="searchable"]').exists()).toBe(false)
    await w.find('#lib-status').setValue('searchable')
    expect(w.findAll('tbody tr')).toHaveLength(1)
  })

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

describe('LibraryView sources', () => {
  const zotero = doc(4, {
    title: 'Tidal forcing',
    origin: 'zotero',
    metadata: {
      origin: {
        type: 'zotero',
        library: '/home/me/Zotero',
        format: 'sqlite',
        item: 'item:ABCD1234',
        collections: ['Thesis/Methods', 'Reading'],
        tags: ['sbp', 'tides'],
        cite: { title: 'Tidal forcing', authors: ['Doe, Jane'], year: 2021 },
      },
    },
  })
  const documents = [
    doc(1),
    doc(2, {
      origin: 'folder',
      metadata: { origin: { type: 'folder', folder: '/srv/papers', path: 'ocean/tides.pdf' } },
    }),
    doc(3, { kind: 'chatgpt', origin: 'chatgpt' }),
    zotero,
    doc(5, { origin: 'zotero', metadata: { origin: { type: 'zotero', library: '/z' } } }),
  ]

  async function mountLibrary() {
    vi.stubGlobal('fetch', fetchRoutes({ 'GET /api/documents': () => json({ documents }) }))
    return mountView()
  }

  it('shows where each document came from as a badge, with the details as its title', async () => {
    const w = await mountLibrary()
    const badge = (id: number) => w.get(`[data-doc="${id}"] [data-testid="origin"]`)
    expect([1, 2, 3, 4, 5].map((id) => badge(id).text())).toEqual([
      'Upload',
      'Folder',
      'ChatGPT',
      'Zotero',
      'Zotero',
    ])
    expect(badge(1).attributes('title')).toBe('Upload')
    expect(badge(2).attributes('title')).toBe('Watched folder /srv/papers — ocean/tides.pdf')
    expect(badge(3).attributes('title')).toBe('ChatGPT')
    expect(badge(4).attributes('title')).toBe(
      'Zotero library /home/me/Zotero — collections: Thesis/Methods, Reading — tags: sbp, tides',
    )
    expect(badge(5).attributes('title')).toBe('Zotero library /z')
  })

  it("shows a Zotero document's collections and tags under its title", async () => {
    const w = await mountLibrary()
    expect(w.get('[data-doc="4"] [data-testid="zotero-facets"]').text()).toBe(
      'in Thesis/Methods, Reading · tagged sbp, tides',
    )
    // None for a Zotero item without any, nor for other origins.
    expect(w.find('[data-doc="5"] [data-testid="zotero-facets"]').exists()).toBe(false)
    expect(w.find('[data-doc="2"] [data-testid="zotero-facets"]').exists()).toBe(false)
  })

  it('filters by source, offering only the sources present', async () => {
    const w = await mountLibrary()
    const select = w.get('[data-testid="origin-filter"]')
    expect(select.attributes('id')).toBe('lib-origin')
    expect(select.findAll('option').map((o) => [o.attributes('value'), o.text()])).toEqual([
      ['', 'All sources'],
      ['upload', 'Upload'],
      ['folder', 'Folder'],
      ['chatgpt', 'ChatGPT'],
      ['zotero', 'Zotero'],
    ])
    const shown = () => w.findAll('tbody tr').map((r) => r.attributes('data-doc'))
    expect(shown()).toEqual(['1', '2', '3', '4', '5'])
    await select.setValue('zotero')
    expect(shown()).toEqual(['4', '5'])
    expect(w.get('.filters [aria-live]').text()).toBe('2 of 5')
    await select.setValue('folder')
    expect(shown()).toEqual(['2'])
    // With the kind filter too: a folder document that is not an EPUB is not shown.
    await w.get('#lib-kind').setValue('epub')
    expect(shown()).toEqual([])
    await select.setValue('')
    await w.get('#lib-kind').setValue('')
    expect(shown()).toHaveLength(5)
  })
})

describe('LibraryView privacy', () => {
  it('marks private documents with a badge, and only those', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents': () =>
          json({
            documents: [
              doc(1, { visibility: 'private', owner: 'alice' }),
              doc(2, { visibility: 'team', owner: 'bob' }),
              doc(3, { visibility: 'team', owner: null }),
            ],
          }),
      }),
    )
    const w = await mountView()
    const badge = (id: number) => w.find(`[data-doc="${id}"] [data-testid="private-badge"]`)
    expect(badge(1).text()).toBe('private')
    expect(badge(1).attributes('title')).toBe('Only its owner sees this document')
    expect(badge(2).exists()).toBe(false)
    expect(badge(3).exists()).toBe(false)
    expect(w.findAll('[data-testid="private-badge"]')).toHaveLength(1)
  })

  it('offers Re-ingest and Delete only on documents the reader may change', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents': () =>
          json({
            documents: [
              doc(1, { visibility: 'team', owner: 'alice', can_change: false }),
              doc(2, { visibility: 'private', owner: 'bob', can_change: true }),
            ],
          }),
      }),
    )
    const w = await mountView()
    const buttons = (id: number) => w.findAll(`[data-doc="${id}"] button`).map((b) => b.text())
    expect(buttons(1)).not.toContain('Delete')
    expect(buttons(1)).not.toContain('Re-ingest')
    expect(buttons(2)).toEqual(expect.arrayContaining(['Re-ingest', 'Delete']))
  })
})
