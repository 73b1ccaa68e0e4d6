// /api/notes: highlights and notes on a page, answers kept as notes, Zotero's annotations
// (docs/using/notes.md). Bodies are Markdown, stored as written and rendered sanitised.
import { apiFetch, bodyOf, client, type Schemas } from './client'

export type Note = Schemas['NoteOut']
export type NoteIn = Schemas['NoteIn']
export type NotePatch = Schemas['NotePatch']
export type Box = Schemas['Box']

export type NotePage = Schemas['NoteList']
export type CitationStyle = Schemas['CitationStyle']

export interface NoteQuery {
  document_id?: number
  page?: number
  tag?: string
  since?: string
  until?: string
  q?: string
  limit?: number
  offset?: number
}

/** One page of the notes that match (`next_offset` asks for the next one). */
export async function listNotes(query: NoteQuery = {}): Promise<NotePage> {
  return bodyOf(client.GET('/api/notes', { params: { query } }))
}

/** The most notes one request returns: the API's page size (backend api/limits.py). */
export const MAX_PAGE_SIZE = 1000

/** Every note that matches, page after page (at most `maxPages` requests). */
export async function listAllNotes(query: NoteQuery = {}, maxPages = 100): Promise<Note[]> {
  const out: Note[] = []
  let offset: number | null = 0
  for (let i = 0; i < maxPages && offset !== null; i++) {
    const got: NotePage = await listNotes({ limit: MAX_PAGE_SIZE, ...query, offset })
    out.push(...got.notes)
    offset = got.next_offset ?? null
  }
  return out
}

export function createNote(body: NoteIn): Promise<Note> {
  return bodyOf(client.POST('/api/notes', { body }))
}

export function updateNote(id: number, body: NotePatch): Promise<Note> {
  return bodyOf(client.PATCH('/api/notes/{note_id}', { params: { path: { note_id: id } }, body }))
}

export async function deleteNote(id: number): Promise<void> {
  await bodyOf(client.DELETE('/api/notes/{note_id}', { params: { path: { note_id: id } } }))
}

/** The citation styles whose name has the words of `q` (the first 50), and how many match. */
export function listStyles(q = ''): Promise<Schemas['CitationStyles']> {
  return bodyOf(client.GET('/api/notes/styles', { params: { query: { q } } }))
}

/** A document's notes as one Markdown file (YAML front matter, a quote per highlight), each
 * highlight cited in `style` (the Settings' choice). */
export async function exportNotes(
  documentId: number,
  style = 'quire',
): Promise<{ text: string; filename: string }> {
  const query = new URLSearchParams({
    document_id: String(documentId),
    base_url: window.location.origin,
    style,
  })
  const resp = await apiFetch(`/api/notes/export?${query}`)
  const disposition = resp.headers.get('content-disposition') ?? ''
  const named = /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1]
  return {
    text: await resp.text(),
    filename: named ? decodeURIComponent(named) : `notes-${documentId}.md`,
  }
}
