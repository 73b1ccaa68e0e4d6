// GET /api/messages/{id}/export: an answer as Markdown with its references, or the documents
// it cites as BibTeX or CSL JSON. The text is fetched (with the API token, through apiFetch),
// then copied to the clipboard or saved as a file under the name the server gives it.
import { apiFetch } from './client'
import type { paths } from './schema'

export type ExportFormat = NonNullable<
  NonNullable<paths['/api/messages/{message_id}/export']['get']['parameters']['query']>['format']
>

export interface Exported {
  text: string
  filename: string
  type: string
}

const EXTENSIONS: Record<ExportFormat, string> = { markdown: 'md', bibtex: 'bib', csl: 'json' }

/** The export of answer ``messageId`` in ``format`` (an ApiError when refused). */
export async function fetchExport(messageId: number, format: ExportFormat): Promise<Exported> {
  const resp = await apiFetch(`/api/messages/${messageId}/export?format=${format}`)
  const disposition = resp.headers.get('content-disposition') ?? ''
  const named = /filename="([^"]+)"/.exec(disposition)?.[1]
  return {
    text: await resp.text(),
    filename: named ?? `quire-answer-${messageId}.${EXTENSIONS[format]}`,
    type: resp.headers.get('content-type') ?? 'text/plain',
  }
}

/** Save ``exported`` as a download (a temporary object URL on a clicked link). */
export function download(exported: Exported): void {
  const url = URL.createObjectURL(new Blob([exported.text], { type: exported.type }))
  const link = document.createElement('a')
  link.href = url
  link.download = exported.filename
  document.body.append(link)
  link.click()
  link.remove()
  // Revoked after the click has been handled: revoking at once can cancel the download.
  setTimeout(() => URL.revokeObjectURL(url), 0)
}
