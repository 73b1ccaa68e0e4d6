import { request, type Schemas } from './client'

export type Document = Schemas['DocumentOut']
export type Job = Schemas['JobOut']
export type Page = Schemas['PageOut']
export type PageBrief = Schemas['PageBrief']
export type Kind = 'pdf' | 'epub' | 'perplexity' | 'markdown' | 'text'

export const KINDS: Kind[] = ['pdf', 'epub', 'perplexity', 'markdown', 'text']

export async function listDocuments(): Promise<Document[]> {
  return (await request<Schemas['DocumentList']>('/api/documents')).documents
}

export function getDocument(id: number): Promise<Document> {
  return request<Document>(`/api/documents/${id}`)
}

export function deleteDocument(id: number): Promise<void> {
  return request<void>(`/api/documents/${id}`, { method: 'DELETE' })
}

export function reingestDocument(id: number): Promise<Job> {
  return request<Job>(`/api/documents/${id}/reingest`, { method: 'POST' })
}

export async function listPages(id: number): Promise<PageBrief[]> {
  return (await request<Schemas['PageList']>(`/api/documents/${id}/pages`)).pages
}

export function getPage(id: number, page: number): Promise<Page> {
  return request<Page>(`/api/documents/${id}/pages/${page}`)
}

/** The original file; PDF viewers open it at `#page=N`. */
export function fileUrl(id: number, page?: number, kind?: string): string {
  const url = `/api/documents/${id}/file`
  return page && kind === 'pdf' ? `${url}#page=${page}` : url
}

/** The thread URL of a Perplexity document, when its metadata has one. */
export function threadUrl(doc: Pick<Document, 'kind' | 'metadata'>): string | null {
  const url = doc.metadata?.url
  return doc.kind === 'perplexity' && typeof url === 'string' && /^https?:\/\//.test(url)
    ? url
    : null
}
