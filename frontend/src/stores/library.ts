// The library: documents, refreshed while any of them is still being ingested, the
// languages they are written in, and where they came from (origins, Zotero collections, tags).
import { defineStore } from 'pinia'
import { computed, ref } from 'vue'

import { messageOf } from '@/api/client'
import * as api from '@/api/documents'
import type { Document } from '@/api/documents'
import { getLanguages, type LibraryLanguage } from '@/api/languages'
import { getSources, type FacetCount, type OriginCount } from '@/api/sources'

export const useLibraryStore = defineStore('library', () => {
  const documents = ref<Document[]>([])
  const loaded = ref(false)
  const error = ref<string | null>(null)
  /** The detected languages (GET /api/library/languages); empty until loaded or on failure. */
  const languages = ref<LibraryLanguage[]>([])
  /** Documents by origin, and the Zotero collections and tags (GET /api/library/sources);
   * empty until loaded or on failure. */
  const origins = ref<OriginCount[]>([])
  const collections = ref<FacetCount[]>([])
  const tags = ref<FacetCount[]>([])

  const busy = computed(() =>
    documents.value.some((d) => d.status === 'queued' || d.status === 'processing'),
  )
  const ready = computed(() => documents.value.filter((d) => d.status === 'ready'))

  async function refresh(): Promise<void> {
    try {
      documents.value = await api.listDocuments()
      error.value = null
    } catch (err) {
      error.value = messageOf(err)
    } finally {
      loaded.value = true
    }
  }

  async function loadLanguages(): Promise<void> {
    try {
      languages.value = (await getLanguages()).languages
    } catch {
      // Only the search filter uses these: without them it is simply not offered.
      languages.value = []
    }
  }

  async function loadSources(): Promise<void> {
    try {
      const s = await getSources()
      origins.value = s.origins
      collections.value = s.collections
      tags.value = s.tags
    } catch {
      // As for the languages: only the search filters use these.
      origins.value = []
      collections.value = []
      tags.value = []
    }
  }

  async function remove(id: number): Promise<void> {
    await api.deleteDocument(id)
    documents.value = documents.value.filter((d) => d.id !== id)
  }

  async function reingest(id: number): Promise<void> {
    const job = await api.reingestDocument(id)
    const doc = documents.value.find((d) => d.id === id)
    if (doc) {
      doc.status = 'queued'
      doc.error = null
      doc.job = { id: job.id, status: job.status, stage: job.stage, progress: job.progress }
    }
  }

  return {
    documents,
    loaded,
    error,
    languages,
    origins,
    collections,
    tags,
    busy,
    ready,
    refresh,
    loadLanguages,
    loadSources,
    remove,
    reingest,
  }
})
