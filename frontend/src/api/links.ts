// Links: a page (or the file behind a link) added by its address, fetched by the server; and
// the pages a Perplexity thread cites, added in one action with an outcome per address.
import { bodyOf, client, type Schemas } from './client'
import type { Visibility } from './documents'
import { readEvents } from './sse'

export type LinkResult = Schemas['LinkOut']
export type SourceOutcome = Schemas['SourceOutcomeOut']
export type SourcesDone = Schemas['SourcesDoneOut']

/** Whether text is an address the server may be asked to fetch (http or https). */
export function isLink(text: string): boolean {
  try {
    const url = new URL(text.trim())
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== ''
  } catch {
    return false
  }
}

/** A page the browser already rendered (the bookmarklet's save, views/SaveView.vue): the
 * server stores this HTML for the URL instead of fetching it. */
export interface RenderedPage {
  url: string
  title: string
  html: string
}

/** What each outcome means to the person who saved a page (the extension says the same). */
export const SAVED_OUTCOMES: Record<LinkResult['status'], string> = {
  added: 'Saved',
  updated: 'Updated',
  unchanged: 'Already in the library',
}

/** `POST /api/documents/url`: added or updated (a job follows), or unchanged. With
 * ``rendered``, the page as the browser shows it is stored and nothing is fetched. */
export function addLink(
  url: string,
  visibility: Visibility = 'team',
  rendered?: Pick<RenderedPage, 'title' | 'html'>,
): Promise<LinkResult> {
  return bodyOf(
    client.POST('/api/documents/url', { body: { url: url.trim(), visibility, ...rendered } }),
  )
}

/**
 * `POST /api/documents/{id}/sources/add`: each cited page added on the server, its outcome
 * reported as it is done (`onOutcome`); resolves with them all, in the thread's order.
 */
export async function addCitedPages(
  id: number,
  onOutcome: (outcome: SourceOutcome) => void,
  signal?: AbortSignal,
): Promise<SourcesDone> {
  const stream = await bodyOf(
    client.POST('/api/documents/{document_id}/sources/add', {
      params: { path: { document_id: id } },
      parseAs: 'stream',
      headers: { Accept: 'text/event-stream' },
      signal,
    }),
  )
  for await (const msg of readEvents(stream)) {
    if (msg.event === 'outcome') onOutcome(JSON.parse(msg.data) as SourceOutcome)
    else if (msg.event === 'done') return JSON.parse(msg.data) as SourcesDone
  }
  throw new Error('the server stopped before every cited page was added')
}
