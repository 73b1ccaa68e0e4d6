import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import {
  doc,
  errorJson,
  fetchRoutes,
  json,
  language,
  languagesOut,
  offline,
  sourcesOut,
} from '@/__tests__/fixtures'
import { useLibraryStore } from '../library'

beforeEach(() => setActivePinia(createPinia()))
afterEach(() => vi.unstubAllGlobals())

describe('library store', () => {
  it('loads, knows when ingest is running, deletes and re-ingests', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents': () =>
          json({
            documents: [
              doc(1),
              doc(2, { status: 'processing' }),
              doc(3, { status: 'failed', error: 'bad' }),
            ],
          }),
        'DELETE /api/documents/1': () => json(null, 204),
        'POST /api/documents/3/reingest': () =>
          json(
            { id: 9, status: 'queued', stage: 'queued', progress: 0, attempts: 0, detail: {} },
            202,
          ),
      }),
    )
    const lib = useLibraryStore()
    await lib.refresh()
    expect(lib.documents).toHaveLength(3)
    expect(lib.busy).toBe(true)
    expect(lib.ready.map((d) => d.id)).toEqual([1])
    await lib.remove(1)
    expect(lib.documents.map((d) => d.id)).toEqual([2, 3])
    await lib.reingest(3)
    expect(lib.documents[1]).toMatchObject({ status: 'queued', error: null, job: { id: 9 } })
  })

  it('keeps the error readable', async () => {
    vi.stubGlobal('fetch', offline)
    const lib = useLibraryStore()
    await lib.refresh()
    expect(lib.error).toBe('the server could not be reached')
    expect(lib.loaded).toBe(true)
  })

  it('loads the languages for the search filter; none when the request fails', async () => {
    const langs = [language('en'), language('ja', { covered: false })]
    let fail = false
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/library/languages': () =>
          fail
            ? errorJson(404, 'not_found', 'Not Found')
            : json(languagesOut({ languages: langs })),
      }),
    )
    const lib = useLibraryStore()
    await lib.loadLanguages()
    expect(lib.languages.map((l) => l.language)).toEqual(['en', 'ja'])
    fail = true
    await lib.loadLanguages()
    expect(lib.languages).toEqual([])
  })

  it('loads the sources, collections and tags for the search filters; none on failure', async () => {
    let fail = false
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/library/sources': () =>
          fail
            ? errorJson(500, 'internal', 'boom')
            : json(
                sourcesOut({
                  origins: [
                    { origin: 'upload', documents: 2, chunks: 9 },
                    { origin: 'zotero', documents: 7, chunks: 70 },
                  ],
                  collections: [{ name: 'Thesis/Methods', documents: 3 }],
                  tags: [{ name: 'sbp', documents: 2 }],
                }),
              ),
      }),
    )
    const lib = useLibraryStore()
    await lib.loadSources()
    expect(lib.origins.map((o) => o.origin)).toEqual(['upload', 'zotero'])
    expect(lib.collections).toEqual([{ name: 'Thesis/Methods', documents: 3 }])
    expect(lib.tags).toEqual([{ name: 'sbp', documents: 2 }])
    fail = true
    await lib.loadSources()
    expect([lib.origins, lib.collections, lib.tags]).toEqual([[], [], []])
  })
})
