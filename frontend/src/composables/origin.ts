// Where documents came from, as the app names them, and the details their metadata keeps
// (metadata.origin: the watched folder and path, or the Zotero library, collections and tags).
import type { Document } from '@/api/documents'
import type { Origin } from '@/api/sources'

// A record, so that an origin the backend adds is a type error here until it is named.
const ORIGIN_NAMES: Record<Origin, string> = {
  upload: 'Upload',
  folder: 'Folder',
  chatgpt: 'ChatGPT',
  claude: 'Claude',
  perplexity: 'Perplexity',
  zotero: 'Zotero',
  web: 'Web',
}
/** Every origin, in the order the app lists them. */
export const ORIGINS = Object.keys(ORIGIN_NAMES) as Origin[]

/** "ChatGPT" for chatgpt; an origin the app does not know is shown as the server sent it. */
export function originName(origin: string): string {
  return Object.hasOwn(ORIGIN_NAMES, origin) ? ORIGIN_NAMES[origin as Origin] : origin
}

type Meta = Pick<Document, 'origin' | 'metadata'>

function originMeta(doc: Meta): Record<string, unknown> {
  const o = doc.metadata?.origin
  return typeof o === 'object' && o !== null && !Array.isArray(o)
    ? (o as Record<string, unknown>)
    : {}
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '')
const texts = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s !== '') : []

/** A Zotero document's collections and tags; null for any other origin. */
export function zoteroFacets(doc: Meta): { collections: string[]; tags: string[] } | null {
  if (doc.origin !== 'zotero') return null
  const o = originMeta(doc)
  return { collections: texts(o.collections), tags: texts(o.tags) }
}

/** Where exactly a document came from, in a line (a badge's title). */
export function originDetail(doc: Meta): string {
  const o = originMeta(doc)
  if (doc.origin === 'folder') {
    const folder = text(o.folder)
    const path = text(o.path)
    if (folder || path) return `Watched folder ${folder}${folder && path ? ' — ' : ''}${path}`
  }
  if (doc.origin === 'zotero') {
    const parts = [`Zotero library ${text(o.library)}`.trim()]
    const facets = zoteroFacets(doc)!
    if (facets.collections.length) parts.push(`collections: ${facets.collections.join(', ')}`)
    if (facets.tags.length) parts.push(`tags: ${facets.tags.join(', ')}`)
    return parts.join(' — ')
  }
  return originName(doc.origin)
}

const COUNT_LABELS: Record<string, string> = {
  new: 'new',
  added: 'added',
  ingested: 'ingested',
  updated: 'updated',
  renamed: 'renamed',
  restored: 'restored',
  metadata: 'new metadata',
  unchanged: 'unchanged',
  removed: 'removed',
  failed: 'failed',
  skipped: 'skipped',
}
/** The counts a watched folder's pass reports. */
export const FOLDER_COUNTS = ['added', 'updated', 'renamed', 'restored', 'removed']
/** The counts an import reports (ChatGPT, Claude, Zotero, Perplexity). */
export const IMPORT_COUNTS = [
  'new',
  'ingested',
  'updated',
  'restored',
  'metadata',
  'unchanged',
  'removed',
  'failed',
  'skipped',
]

/** "2 added, 1 updated": the non-zero counts among `keys` in a run's summary. */
export function runSummary(summary: Record<string, unknown>, keys: readonly string[]): string {
  const parts: string[] = []
  for (const key of keys) {
    const v = summary[key]
    const n = typeof v === 'number' ? v : Array.isArray(v) ? v.length : 0
    if (n > 0) parts.push(`${n.toLocaleString()} ${COUNT_LABELS[key] ?? key}`)
  }
  return parts.join(', ') || 'no changes'
}
