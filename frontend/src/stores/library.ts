// The library: documents, refreshed while any of them is still being ingested, and the
// languages they are written in.
import { defineStore } from 'pinia'
import { computed, ref } from 'vue'

import { messageOf } from '@/api/client'
import * as api from '@/api/documents'
import type { Document } from '@/api/documents'
import { getLanguages, type LibraryLanguage } from '@/api/languages'

export const useLibraryStore = defineStore('library', () => {
  const documents = ref<Document[]>([])
  const loaded = ref(false)
  const error = ref<string | null>(null)
  /** The detected languages (GET /api/library/languages); empty until loaded or on failure. */
  const languages = ref<LibraryLanguage[]>([])

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
    busy,
    ready,
    refresh,
    loadLanguages,
    remove,
    reingest,
  }
})
