import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import {
  errorJson,
  fetchRoutes,
  json,
  language,
  languagesOut,
  localName,
  sourceRun,
  sourcesOut,
  watchedFolder,
} from '@/__tests__/fixtures'
import type { Health } from '@/api/health'
import type { LanguagesOut } from '@/api/languages'
import type { SourcesOut } from '@/api/sources'
import { formatDate } from '@/composables/format'
import SettingsView from '../SettingsView.vue'

const HEALTH: Health = {
  status: 'ok',
  version: '0.1.0',
  documents: 4,
  chunks: 60,
  jobs_queued: 0,
  jobs_running: 0,
  vectors: { model: 'all-MiniLM-L6-v2', dim: 384, state: 'ready', count: 60 },
  warm: true,
  formats: [
    { formats: 'Word .docx/.docm, OpenDocument .odt', enabled: true, why: 'built in' },
    {
      formats: 'legacy .doc, .ppt, .xls and .rtf',
      enabled: false,
      why: 'LibreOffice not found: apt install libreoffice-writer-nogui',
    },
  ],
}

beforeEach(() => setActivePinia(createPinia()))
afterEach(() => vi.unstubAllGlobals())

type Handler = () => Response | Promise<Response>

function serve(languages: Handler, sources: Handler = () => json(sourcesOut())) {
  vi.stubGlobal(
    'fetch',
    fetchRoutes({
      'GET /api/health': () => json(HEALTH),
      'GET /api/llm': () => json({ mode: 'extractive', backends: [] }),
      'GET /api/library/languages': languages,
      'GET /api/library/sources': sources,
    }),
  )
}

async function mountView(languages: LanguagesOut | Response) {
  serve(() => (languages instanceof Response ? languages : json(languages)))
  const w = mount(SettingsView)
  await flushPromises()
  return Object.assign(w.get('[data-testid="languages"]'), { page: w })
}

describe('SettingsView languages', () => {
  it('lists the languages with their counts and whether the embedder covers them', async () => {
    const panel = await mountView(
      languagesOut({
        languages: [
          language('en', { name: 'English', documents: 3, chunks: 1200, covered: true }),
          language('ja', { name: 'Japanese', documents: 1, chunks: 80, covered: false }),
          language('qaa', { name: 'Reserved', documents: 1, chunks: 2, covered: null }),
        ],
        undetected: 2,
        hint: 'Set QUIRE_EMBED_MODEL=bge-m3 for a multilingual embedder.',
      }),
    )
    expect(panel.get('[data-testid="languages-embedder"]').text()).toBe('all-MiniLM-L6-v2')
    expect(panel.text()).toContain(`covers ${localName('en')}`)
    const row = (tag: string) => panel.get(`tr[data-language="${tag}"]`)
    const cells = (tag: string) =>
      row(tag)
        .findAll('td')
        .map((c) => c.text())
    expect(cells('en')[0]).toBe(`${localName('en')} en`)
    expect(cells('en').slice(1, 3)).toEqual([(3).toLocaleString(), (1200).toLocaleString()])
    const en = row('en').get('[data-testid="covered"] span')
    expect(en.text()).toBe('✓ covered')
    expect(en.classes()).toContain('ok')
    const ja = row('ja').get('[data-testid="covered"] span')
    expect(ja.text()).toBe('⚠ not covered: search in this language is lexical only')
    expect(ja.classes()).toContain('warn')
    // A language the server cannot name keeps the name it sent.
    expect(cells('qaa')[0]).toBe('Reserved qaa')
    expect(row('qaa').get('[data-testid="covered"]').text()).toBe('unknown')
    expect(panel.get('[data-testid="undetected"]').text()).toBe(
      '2 documents with no detected language.',
    )
    expect(panel.get('[data-testid="languages-hint"]').text()).toBe(
      'Set QUIRE_EMBED_MODEL=bge-m3 for a multilingual embedder.',
    )
  })

  it('says so when the embedder is multilingual, and shows no hint when there is none', async () => {
    const panel = await mountView(
      languagesOut({
        embedder: { name: 'bge-m3', languages: null, multilingual: true, known: true },
        languages: [language('fr'), language('ar')],
      }),
    )
    expect(panel.text()).toContain('bge-m3 — multilingual')
    expect(panel.findAll('[data-testid="covered"] .ok')).toHaveLength(2)
    expect(panel.find('.warn').exists()).toBe(false)
    expect(panel.find('[data-testid="languages-hint"]').exists()).toBe(false)
    expect(panel.find('[data-testid="undetected"]').exists()).toBe(false)
  })

  it('shows an error line when the request fails, and the rest of the page still', async () => {
    const panel = await mountView(errorJson(500, 'internal', 'the database is locked'))
    expect(panel.get('[role="alert"]').text()).toBe('Languages unavailable: the database is locked')
    expect(panel.find('table').exists()).toBe(false)
    expect(panel.page.get('[data-testid="embedder"]').text()).toContain('all-MiniLM-L6-v2')
  })

  it('says it is loading until the answer comes', async () => {
    let answer!: (r: Response) => void
    serve(() => new Promise<Response>((resolve) => (answer = resolve)))
    const w = mount(SettingsView)
    await flushPromises()
    expect(w.get('[data-testid="languages"]').text()).toContain('Loading…')
    expect(w.get('[data-testid="embedder"]').text()).toContain('all-MiniLM-L6-v2')
    answer(json(languagesOut()))
    await flushPromises()
    expect(w.get('[data-testid="languages"]').text()).not.toContain('Loading…')
    expect(w.find('tr[data-language="en"]').exists()).toBe(true)
  })
})

async function mountSources(sources: SourcesOut | Response) {
  serve(
    () => json(languagesOut()),
    () => (sources instanceof Response ? sources : json(sources)),
  )
  const w = mount(SettingsView)
  await flushPromises()
  return Object.assign(w.get('[data-testid="sources"]'), { page: w })
}

describe('SettingsView sources', () => {
  it('counts the documents by source', async () => {
    const panel = await mountSources(
      sourcesOut({
        origins: [
          { origin: 'upload', documents: 3, chunks: 40 },
          { origin: 'zotero', documents: 1200, chunks: 56000 },
        ],
      }),
    )
    const cells = (origin: string) =>
      panel
        .get(`[data-testid="origins"] tr[data-origin="${origin}"]`)
        .findAll('td')
        .map((c) => c.text())
    expect(cells('upload')).toEqual(['Upload', '3', '40'])
    expect(cells('zotero')).toEqual(['Zotero', (1200).toLocaleString(), (56000).toLocaleString()])
  })

  it('lists the watched folders, warning about a missing one, with their last pass', async () => {
    const panel = await mountSources(
      sourcesOut({
        watched_folders: [
          watchedFolder('/srv/papers', {
            documents: 12,
            removed: 1,
            last_run: sourceRun({
              source: 'folder',
              location: '/srv/papers',
              summary: { added: 2, updated: 1, renamed: 0, removed: 0, skipped: 0, pending: 0 },
            }),
          }),
          watchedFolder('/mnt/usb/books', {
            configured: false,
            exists: false,
            documents: 4,
            last_run: sourceRun({
              source: 'folder',
              location: '/mnt/usb/books',
              ok: false,
              summary: {},
              error: 'folder not found',
            }),
          }),
          watchedFolder('/home/me/new', { documents: 0 }),
        ],
      }),
    )
    const row = (path: string) => panel.get(`[data-testid="folders"] tr[data-folder="${path}"]`)
    const cells = (path: string) =>
      row(path)
        .findAll('td')
        .map((c) => c.text())

    expect(cells('/srv/papers')[0]).toContain('/srv/papers')
    expect(row('/srv/papers').get('[data-testid="configured"]').text()).toBe('in QUIRE_WATCH_DIRS')
    expect(row('/srv/papers').find('[data-testid="missing"]').exists()).toBe(false)
    expect(cells('/srv/papers').slice(1, 3)).toEqual(['12', '1'])
    const pass = row('/srv/papers').get('[data-testid="last-pass"]').text()
    expect(pass).toContain(formatDate('2025-01-02T03:01:00Z'))
    expect(pass).toContain('2 added, 1 updated')

    const usb = row('/mnt/usb/books')
    expect(usb.get('[data-testid="configured"]').text()).toBe('not configured: seen by quire watch')
    const missing = usb.get('[data-testid="missing"]')
    expect(missing.text()).toBe('⚠ folder missing — its documents are kept')
    expect(missing.classes()).toContain('warn')
    expect(usb.get('[data-testid="last-pass"] .error').text()).toBe('folder not found')

    expect(row('/home/me/new').get('[data-testid="last-pass"]').text()).toBe('no pass yet')
    expect(panel.find('[data-testid="folders-empty"]').exists()).toBe(false)
  })

  it('lists the last import of each source, a failed one as an error', async () => {
    const panel = await mountSources(
      sourcesOut({
        imports: [
          sourceRun({
            source: 'zotero',
            location: '/home/me/Zotero',
            finished_at: '2025-03-04T05:06:00Z',
            summary: {
              items: 40,
              attachments: 38,
              new: 30,
              updated: 2,
              metadata: 5,
              unchanged: 0,
              removed: 1,
              skipped: 3,
            },
          }),
          sourceRun({
            source: 'claude',
            location: '/home/me/claude.zip',
            ok: false,
            summary: {},
            error: 'not a Claude export: conversations.json is missing',
          }),
          sourceRun(),
        ],
      }),
    )
    const rows = panel.findAll('[data-testid="imports"] tbody tr')
    expect(rows.map((r) => r.attributes('data-import'))).toEqual(['zotero', 'claude', 'chatgpt'])
    const cells = rows.map((r) => r.findAll('td').map((c) => c.text()))
    expect(cells[0]!.slice(0, 3)).toEqual([
      'Zotero',
      '/home/me/Zotero',
      formatDate('2025-03-04T05:06:00Z'),
    ])
    expect(cells[0]![3]).toBe('OK 30 new, 2 updated, 5 new metadata, 1 removed, 3 skipped')
    expect(cells[2]![0]).toBe('ChatGPT')
    expect(cells[2]![3]).toBe('OK 10 new, 2 unchanged')
    const failed = rows[1]!.get('[data-testid="result"] [role="alert"]')
    expect(failed.text()).toBe('not a Claude export: conversations.json is missing')
    expect(failed.classes()).toContain('error')
    expect(rows[1]!.find('.badge.ok').exists()).toBe(false)
    expect(panel.findAll('[role="alert"]')).toHaveLength(1)
    expect(panel.find('[data-testid="imports-empty"]').exists()).toBe(false)
  })

  it('says how to add a watched folder or import one when there is none', async () => {
    const panel = await mountSources(sourcesOut({ origins: [] }))
    expect(panel.text()).toContain('No documents yet.')
    expect(panel.find('[data-testid="folders"]').exists()).toBe(false)
    expect(panel.find('[data-testid="imports"]').exists()).toBe(false)
    const folders = panel.get('[data-testid="folders-empty"]').text()
    expect(folders).toContain('QUIRE_WATCH_DIRS')
    expect(folders).toContain('quire watch DIR')
    const imports = panel.get('[data-testid="imports-empty"]').text()
    expect(imports).toContain('quire import chatgpt|claude|zotero PATH')
    expect(imports).toContain('Perplexity')
  })

  it('shows an error line when the request fails, and the rest of the page still', async () => {
    const panel = await mountSources(errorJson(500, 'internal', 'the database is locked'))
    expect(panel.get('[role="alert"]').text()).toBe('Sources unavailable: the database is locked')
    expect(panel.find('table').exists()).toBe(false)
    expect(panel.page.find('tr[data-language="en"]').exists()).toBe(true)
  })

  it('says it is loading until the answer comes', async () => {
    let answer!: (r: Response) => void
    serve(
      () => json(languagesOut()),
      () => new Promise<Response>((resolve) => (answer = resolve)),
    )
    const w = mount(SettingsView)
    await flushPromises()
    expect(w.get('[data-testid="sources"]').text()).toContain('Loading…')
    expect(w.find('tr[data-language="en"]').exists()).toBe(true)
    answer(json(sourcesOut()))
    await flushPromises()
    expect(w.get('[data-testid="sources"]').text()).not.toContain('Loading…')
    expect(w.find('tr[data-origin="upload"]').exists()).toBe(true)
  })
})

describe('SettingsView formats', () => {
  it('says which formats are read here and why', async () => {
    const { page } = await mountView(languagesOut({}))
    const rows = page.get('[data-testid="formats"]').findAll('tbody tr')
    expect(rows.map((r) => r.attributes('data-enabled'))).toEqual(['true', 'false'])
    expect(rows[1]!.text()).toContain('legacy .doc, .ppt, .xls and .rtf')
    expect(rows[1]!.text()).toContain('no')
    expect(rows[1]!.text()).toContain('apt install libreoffice-writer-nogui')
  })
})
