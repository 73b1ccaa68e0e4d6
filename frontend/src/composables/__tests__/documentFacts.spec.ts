import { describe, expect, it } from 'vitest'

import { doc } from '@/__tests__/fixtures'
import type { PageBrief } from '@/api/documents'
import { documentFacts, findPage, sizeLine } from '../documentFacts'

const brief = (page: number, page_label: string | null): PageBrief => ({
  kind: 'pdf',
  page,
  page_label,
  heading_path: '',
  chars: 10,
  source: 'text_layer',
  place: page_label ? `p. ${page_label} (PDF p. ${page})` : `p. ${page}`,
  section: '',
})

describe('findPage', () => {
  // Think Complexity: i, i, ii … xvi on PDF pages 1–17, then 1 … on 18 …
  const pages = [brief(1, 'i'), brief(2, 'i'), brief(13, 'xii'), brief(18, '1'), brief(62, '45')]

  it('reads a printed label first, in any case, with or without "p."', () => {
    expect(findPage(pages, 'xii')).toBe(13)
    expect(findPage(pages, ' XII ')).toBe(13)
    expect(findPage(pages, 'p. 45')).toBe(62)
    expect(findPage(pages, 'i')).toBe(1) // the first of two pages printed "i"
  })

  it('reads a place in the file when asked for one, or when no label matches', () => {
    expect(findPage(pages, 'PDF p. 13')).toBe(13)
    expect(findPage(pages, '#2')).toBe(2)
    expect(findPage([brief(7, null)], '7')).toBe(7)
  })

  it('finds nothing for a page the document does not have', () => {
    expect(findPage(pages, 'cxx')).toBeNull()
    expect(findPage(pages, '999')).toBeNull()
    expect(findPage(pages, '')).toBeNull()
  })
})

describe('documentFacts', () => {
  it('labels what it knows and leaves out every other key', () => {
    const facts = documentFacts(
      doc(1, {
        metadata: { rebuilt_xref: false, outline_entries: 3, epub_version: '3.0', doi: '10.1/x' },
      }),
    )
    expect(facts).toEqual([{ label: 'DOI', value: '10.1/x' }])
  })

  it('counts in the unit of the kind', () => {
    expect(sizeLine({ kind: 'pptx', page_count: 1, chunk_count: 3 })).toBe('1 slide · 3 passages')
    expect(sizeLine({ kind: 'epub', page_count: 64, chunk_count: 1032 })).toBe(
      '64 sections · 1,032 passages',
    )
  })
})
