// The document page in plain words: what a document's metadata says, by an allow-list with
// labels (internal keys such as `rebuilt_xref` or `outline_entries` are never shown), and the
// page a jump-to-page field means.
import type { Document, PageBrief } from '@/api/documents'

/** What one unit of each kind is called when they are counted ("244 pages"). */
const UNIT_NOUNS: Readonly<Record<string, string>> = {
  pdf: 'page',
  image: 'page',
  docx: 'page',
  odt: 'page',
  pptx: 'slide',
  odp: 'slide',
  xlsx: 'sheet part',
  ods: 'sheet part',
  perplexity: 'turn',
  chatgpt: 'turn',
  claude: 'turn',
  text: 'part',
}

function counted(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`
}

/** "244 pages · 1,032 passages". */
export function sizeLine(doc: Pick<Document, 'kind' | 'page_count' | 'chunk_count'>): string {
  const noun = UNIT_NOUNS[doc.kind] ?? 'section'
  return `${counted(doc.page_count, noun)} · ${counted(doc.chunk_count, 'passage')}`
}

export interface Fact {
  label: string
  value: string
}

type Meta = Record<string, unknown>
const text = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : null
const list = (v: unknown): string[] =>
  Array.isArray(v) ? v.map(text).filter((x): x is string => x !== null) : []

/** The facts worth showing, in order; each reads its own key(s) and may say nothing. */
const FACTS: ReadonlyArray<(m: Meta, doc: Document) => Fact | null> = [
  (m, doc) =>
    !doc.author && list(m.authors).length
      ? { label: 'Authors', value: list(m.authors).join(', ') }
      : null,
  (m) => (text(m.year) ? { label: 'Year', value: text(m.year)! } : null),
  (m) => (text(m.published) ? { label: 'Published', value: text(m.published)! } : null),
  (m) => (text(m.publisher) ? { label: 'Publisher', value: text(m.publisher)! } : null),
  (m) => (text(m.site) ? { label: 'Site', value: text(m.site)! } : null),
  (m) => (text(m.doi) ? { label: 'DOI', value: text(m.doi)! } : null),
  (m) => (text(m.isbn) ? { label: 'ISBN', value: text(m.isbn)! } : null),
  (m) =>
    text(m.url) && /^https?:\/\//.test(text(m.url)!)
      ? { label: 'Address', value: text(m.url)! }
      : null,
  (m) => (text(m.producer) ? { label: 'Made with', value: text(m.producer)! } : null),
  (m) =>
    m.page_labels === true
      ? { label: 'Page numbers', value: 'as printed in the book (citations give both)' }
      : null,
  (m) => {
    const pages = list(m.ocr_pages)
    if (!pages.length) return null
    return {
      label: 'Read by OCR',
      value: `${counted(pages.length, 'page')} (scanned or without text)`,
    }
  },
  (m) => {
    const pages = list(m.ocr_skipped_pages)
    return pages.length
      ? { label: 'Not read', value: `${counted(pages.length, 'page')}: OCR is not installed` }
      : null
  },
  (m) =>
    m.rebuilt_xref === true
      ? { label: 'Repaired', value: "the file's cross-reference table was rebuilt" }
      : null,
  (m) =>
    text(m.converted_from) ? { label: 'Converted from', value: text(m.converted_from)! } : null,
  (m) => (m.macros ? { label: 'Macros', value: 'the file contains macros (never run)' } : null),
  (m) => (list(m.notices).length ? { label: 'Notes', value: list(m.notices).join('; ') } : null),
]

/** The document's metadata as labelled facts: only what the allow-list names. */
export function documentFacts(doc: Document): Fact[] {
  const meta = (doc.metadata ?? {}) as Meta
  return FACTS.map((fact) => fact(meta, doc)).filter((f): f is Fact => f !== null)
}

/** The page a reader means by `wanted`: a printed page label ("xii", "45", "p. 45") first,
 * else a position in the file ("PDF p. 62", "#62", or a number when no label matches). */
export function findPage(pages: readonly PageBrief[], wanted: string): number | null {
  const raw = wanted.trim().replace(/\s+/g, ' ')
  const physical = /^(?:pdf\s*(?:p\.?|page)?|#)\s*(\d+)$/i.exec(raw)
  if (physical) return pageAt(pages, Number(physical[1]))
  const label = raw.replace(/^(?:p\.|page)\s*/i, '').toLowerCase()
  if (!label) return null
  const printed = pages.find((p) => p.page_label?.toLowerCase() === label)
  if (printed) return printed.page
  return /^\d+$/.test(label) ? pageAt(pages, Number(label)) : null
}

function pageAt(pages: readonly PageBrief[], n: number): number | null {
  return pages.some((p) => p.page === n) ? n : null
}
