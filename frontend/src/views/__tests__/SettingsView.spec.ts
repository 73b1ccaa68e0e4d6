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
} from '@/__tests__/fixtures'
import type { Health } from '@/api/health'
import type { LanguagesOut } from '@/api/languages'
import SettingsView from '../SettingsView.vue'

const HEALTH: Health = {
  status: 'ok',
  version: '0.1.0',
  documents: 4,
  chunks: 60,
  jobs_queued: 0,
  jobs_running: 0,
  vectors: { model: 'all-MiniLM-L6-v2', dim: 384, state: 'ready', count: 60 },
}

beforeEach(() => setActivePinia(createPinia()))
afterEach(() => vi.unstubAllGlobals())

function serve(languages: () => Response | Promise<Response>) {
  vi.stubGlobal(
    'fetch',
    fetchRoutes({
      'GET /api/health': () => json(HEALTH),
      'GET /api/llm': () => json({ mode: 'extractive', backends: [] }),
      'GET /api/library/languages': languages,
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
