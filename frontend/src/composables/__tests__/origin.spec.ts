import { describe, expect, it } from 'vitest'

import { doc } from '@/__tests__/fixtures'
import {
  FOLDER_COUNTS,
  IMPORT_COUNTS,
  ORIGINS,
  originDetail,
  originName,
  runSummary,
  zoteroFacets,
} from '../origin'

describe('origin', () => {
  it('names every origin, and shows an unknown one as sent', () => {
    expect(ORIGINS.map(originName)).toEqual([
      'Upload',
      'Folder',
      'ChatGPT',
      'Claude',
      'Perplexity',
      'Zotero',
      'Web',
    ])
    expect(originName('dropbox')).toBe('dropbox')
    expect(originName('toString')).toBe('toString')
  })

  it('falls back to the name when metadata.origin is missing or malformed', () => {
    expect(originDetail(doc(1, { origin: 'folder' }))).toBe('Folder')
    expect(originDetail(doc(1, { origin: 'folder', metadata: { origin: 'x' } }))).toBe('Folder')
    expect(originDetail(doc(1, { origin: 'web' }))).toBe('Web')
    const z = doc(1, { origin: 'zotero', metadata: { origin: { tags: ['a', 3, ''] } } })
    expect(zoteroFacets(z)).toEqual({ collections: [], tags: ['a'] })
    expect(originDetail(z)).toBe('Zotero library — tags: a')
    expect(zoteroFacets(doc(1))).toBeNull()
  })

  it('sums up a run from the counts it has', () => {
    expect(runSummary({ added: 2, updated: 1, renamed: 0, pending: 4 }, FOLDER_COUNTS)).toBe(
      '2 added, 1 updated',
    )
    expect(runSummary({ new: 0, unchanged: 0 }, IMPORT_COUNTS)).toBe('no changes')
    expect(runSummary({ metadata: 3, skipped: [{}, {}] }, IMPORT_COUNTS)).toBe(
      '3 new metadata, 2 skipped',
    )
  })
})
