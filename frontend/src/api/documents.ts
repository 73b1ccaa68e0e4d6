import { apiFetch, bodyOf, client, type Schemas } from './client'

export type Document = Schemas['DocumentOut']
/** Who sees a document in a team library: everyone ("team") or its owner only ("private"). */
export type Visibility = NonNullable<Document['visibility']>
export type Job = Schemas['JobOut']
export type Page = Schemas['PageOut']
export type PageBrief = Schemas['PageBrief']
export type PageList = Schemas['PageList']
export type OutlineEntry = Schemas['OutlineEntry']
export type Kind = Schemas['ChatIn']['kinds'][number]

// A record, so that a kind the backend adds is a type error here until it is listed.
const KIND_NAMES: Record<Kind, true> = {
  pdf: true,
  epub: true,
  perplexity: true,
  markdown: true,
  text: true,
  chatgpt: true,
  claude: true,
  docx: true,
  odt: true,
  pptx: true,
  odp: true,
  xlsx: true,
  ods: true,
  image: true,
  web: true,
  note: true,
}
export const KINDS = Object.keys(KIND_NAMES) as Kind[]

const byId = (document_id: number) => ({ params: { path: { document_id } } })

export async function listDocuments(): Promise<Document[]> {
  return (await bodyOf(client.GET('/api/documents'))).documents
}

export function getDocument(id: number): Promise<Document> {
  return bodyOf(client.GET('/api/documents/{document_id}', byId(id)))
}

export async function deleteDocument(id: number): Promise<void> {
  await client.DELETE('/api/documents/{document_id}', byId(id))
}

export function reingestDocument(id: number): Promise<Job> {
  return bodyOf(client.POST('/api/documents/{document_id}/reingest', byId(id)))
}

/** Every page with its place, and the document's outline. */
export function listPages(id: number): Promise<PageList> {
  return bodyOf(client.GET('/api/documents/{document_id}/pages', byId(id)))
}

export function getPage(id: number, page: number): Promise<Page> {
  return bodyOf(
    client.GET('/api/documents/{document_id}/pages/{page}', {
      params: { path: { document_id: id, page } },
    }),
  )
}

/** The original file; PDF viewers open it at `#page=N`. */
export function fileUrl(id: number, page?: number, kind?: string): string {
  const url = `/api/documents/${id}/file`
  return page && kind === 'pdf' ? `${url}#page=${page}` : url
}

/** An Office document's PDF rendition (LibreOffice's, made at ingest). */
export function renditionUrl(id: number): string {
  return `/api/documents/${id}/rendition`
}

/** The original file's bytes, or its rendition's, fetched with the API token (pdf.js is handed
 * these, not a URL). */
export async function fileBytes(
  id: number,
  signal?: AbortSignal,
  rendition = false,
): Promise<ArrayBuffer> {
  const url = rendition ? renditionUrl(id) : fileUrl(id)
  const resp = await apiFetch(new Request(new URL(url, location.origin), { signal }))
  return resp.arrayBuffer()
}

/** A page of an image document as PNG, upright as OCR read it (fetched with the API token). */
export async function pageImage(id: number, page: number, signal?: AbortSignal): Promise<Blob> {
  const url = new URL(`/api/documents/${id}/pages/${page}/image`, location.origin)
  return (await apiFetch(new Request(url, { signal }))).blob()
}

/** The thread URL of a Perplexity, ChatGPT or Claude document, when its metadata has one. */
export function threadUrl(doc: Pick<Document, 'kind' | 'metadata'>): string | null {
  const url = doc.metadata?.url
  const turns = ['perplexity', 'chatgpt', 'claude'].includes(doc.kind)
  return turns && typeof url === 'string' && /^https?:\/\//.test(url) ? url : null
}
