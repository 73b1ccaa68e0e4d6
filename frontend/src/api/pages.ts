// POST /api/documents/url with a page the browser already rendered (the bookmarklet's save,
// views/SaveView.vue): the server stores that HTML for the URL instead of fetching it.
// Typed by hand until the route is in schema.d.ts (the web-fetch change adds it).
import { apiFetch } from './client'
import type { Document, Job } from './documents'

export interface RenderedPage {
  url: string
  title: string
  html: string
}

export interface SavedPage {
  status: 'added' | 'updated' | 'unchanged'
  document: Document
  job: Job | null
}

/** What each status means to the person who saved the page (the extension says the same). */
export const SAVED_OUTCOMES: Record<SavedPage['status'], string> = {
  added: 'Saved',
  updated: 'Updated',
  unchanged: 'Already in the library',
}

export async function saveRenderedPage(page: RenderedPage): Promise<SavedPage> {
  const request = new Request(new URL('/api/documents/url', location.origin), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(page),
  })
  return (await (await apiFetch(request)).json()) as SavedPage
}
