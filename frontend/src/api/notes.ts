// /api/notes: highlights and notes on a page, answers kept as notes, Zotero's annotations
// (docs/using/notes.md). Bodies are Markdown, stored as written and rendered sanitised.
import { apiFetch, bodyOf, client, type Schemas } from './client'

export type Note = Schemas['NoteOut']
export type NoteIn = Schemas['NoteIn']
export type NotePatch = Schemas['NotePatch']
export type Box = Schemas['Box']

export interface NoteQuery {
  document_id?: number
  tag?: string
  since?: string
  until?: string
  q?: string
  limit?: number
}

export async function listNotes(query: NoteQuery = {}): Promise<{ notes: Note[]; total: number }> {
  return bodyOf(client.GET('/api/notes', { params: { query } }))
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

/** A document's notes as one Markdown file (YAML front matter, a quote per highlight). */
export async function exportNotes(documentId: number): Promise<{ text: string; filename: string }> {
  const base = encodeURIComponent(window.location.origin)
  const resp = await apiFetch(`/api/notes/export?document_id=${documentId}&base_url=${base}`)
  const disposition = resp.headers.get('content-disposition') ?? ''
  const named = /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1]
  return {
    text: await resp.text(),
    filename: named ? decodeURIComponent(named) : `notes-${documentId}.md`,
  }
}
