// Where a citation leads: the source viewer route for the cited page, carrying the chunk, the
// query matches and the quote to highlight.
import type { RouteLocationRaw } from 'vue-router'

import type { Source } from '@/api/chat'
import { formatSpans } from './highlight'

const MAX_QUOTE = 400

export function sourceQuery(src: Source): Record<string, string> {
  const query: Record<string, string> = { chunk: String(src.chunk_id) }
  if (src.highlights?.length) query.hl = formatSpans(src.highlights)
  if (src.quote) query.quote = src.quote.slice(0, MAX_QUOTE)
  return query
}

export function sourceRoute(src: Source): RouteLocationRaw {
  return {
    name: 'source',
    params: { id: String(src.document_id), page: String(src.page) },
    query: sourceQuery(src),
  }
}

/** The same as a plain href (answers are HTML strings, not router links). */
export function sourceHref(src: Source): string {
  const qs = new URLSearchParams(sourceQuery(src)).toString()
  return `/library/${src.document_id}/pages/${src.page}?${qs}`
}
