// The upload queue: each file is sent on its own request (its own progress bar, its own error,
// and never over the server's body limit), two at a time, then its ingest job is followed
// until the document is ready or failed.
import { defineStore } from 'pinia'
import { computed, ref } from 'vue'

import { messageOf } from '@/api/client'
import type { Job, Visibility } from '@/api/documents'
import { watchJob } from '@/api/jobs'
import { addLink as postLink, type LinkResult } from '@/api/links'
import { uploadFile, type UploadResult } from '@/api/upload'

export type UploadPhase =
  'waiting' | 'uploading' | 'queued' | 'processing' | 'ready' | 'duplicate' | 'failed'

export interface UploadItem {
  key: number
  name: string
  size: number
  phase: UploadPhase
  /** Fraction of the file sent, 0..1. */
  sent: number
  /** Ingest progress 0..1 and stage, from the job. */
  progress: number
  stage: string
  /** How far the current stage is (embed: the share of chunks), from the job's detail. */
  stageProgress: number | null
  /** Its chunks are written: keyword search finds it while the job goes on. */
  searchable: boolean
  /** Queued or running: files taken before it (0: next), and the estimated seconds until it
   * is done (null until the library has finished a file to measure by). */
  ahead: number | null
  etaS: number | null
  documentId: number | null
  jobId: number | null
  error: string | null
  /** As chosen when the file was added; undefined sends no field (the server's default). */
  visibility?: Visibility
  /** A link the server fetches (`name` is its address; no size until it is stored). */
  link?: boolean
}

const PARALLEL = 2
let seq = 0

export const useUploadsStore = defineStore('uploads', () => {
  const items = ref<UploadItem[]>([])
  const files = new Map<number, File>()
  let active = 0

  const pending = computed(() =>
    items.value.some((i) => !['ready', 'duplicate', 'failed'].includes(i.phase)),
  )

  /** A new row, waiting for its turn; its key. */
  function queue(name: string, size: number, visibility?: Visibility, link?: boolean): number {
    const key = ++seq
    items.value.push({
      key,
      name,
      size,
      phase: 'waiting',
      sent: 0,
      progress: 0,
      stage: '',
      stageProgress: null,
      searchable: false,
      ahead: null,
      etaS: null,
      documentId: null,
      jobId: null,
      error: null,
      visibility,
      ...(link && { link }),
    })
    return key
  }

  /** Queue files; `visibility` (a team library) applies to these files, whatever is chosen
   * for later ones. */
  function add(list: Iterable<File>, visibility?: Visibility): void {
    for (const file of list) files.set(queue(file.name, file.size, visibility), file)
    pump()
  }

  /** Queue links: each is fetched by the server, then followed like an uploaded file. */
  function addLinks(urls: Iterable<string>, visibility?: Visibility): void {
    for (const url of urls) queue(url, 0, visibility, true)
    pump()
  }

  function pump(): void {
    while (active < PARALLEL) {
      const next = items.value.find((i) => i.phase === 'waiting')
      if (!next) return
      active++
      void send(next).finally(() => {
        active--
        pump()
      })
    }
  }

  async function send(item: UploadItem): Promise<void> {
    item.phase = 'uploading'
    if (item.link) return fetchLink(item)
    const file = files.get(item.key)!
    try {
      const result = await uploadFile(file, (f) => (item.sent = f), {
        visibility: item.visibility,
      }).promise
      files.delete(item.key)
      accept(item, result)
    } catch (err) {
      item.phase = 'failed'
      item.error = messageOf(err)
    }
  }

  async function fetchLink(item: UploadItem): Promise<void> {
    try {
      const result: LinkResult = await postLink(item.name, item.visibility)
      item.size = result.document.byte_size
      accept(item, {
        filename: item.name,
        status: result.status === 'unchanged' ? 'duplicate' : 'queued',
        document_id: result.document.id,
        job_id: result.job?.id ?? null,
      })
    } catch (err) {
      item.phase = 'failed'
      item.error = messageOf(err)
    }
  }

  function accept(item: UploadItem, result: UploadResult): void {
    item.documentId = result.document_id ?? null
    item.jobId = result.job_id ?? null
    if (result.status === 'rejected') {
      item.phase = 'failed'
      item.error = result.error?.message ?? 'rejected'
    } else if (result.status === 'duplicate') {
      item.phase = 'duplicate'
      item.progress = 1
    } else if (item.jobId !== null) {
      item.phase = 'queued'
      follow(item, item.jobId)
    } else {
      item.phase = 'ready'
    }
  }

  // The watcher ends by itself when the job is done or failed; uploads outlive the page view.
  function follow(item: UploadItem, jobId: number): void {
    watchJob(jobId, (job: Job) => {
      item.progress = job.progress
      item.stage = job.stage
      const fraction = job.detail?.stage_progress
      item.stageProgress = typeof fraction === 'number' ? fraction : null
      item.searchable = job.stage === 'embed' || job.detail?.searchable_s !== undefined
      item.ahead = job.ahead ?? null
      item.etaS = job.eta_s ?? null
      if (job.status === 'running') item.phase = 'processing'
      if (job.status === 'done') item.phase = 'ready'
      if (job.status === 'failed') {
        item.phase = 'failed'
        item.error = job.error ?? 'ingest failed'
      }
    })
  }

  /** Forget finished rows. */
  function clearFinished(): void {
    items.value = items.value.filter((i) => !['ready', 'duplicate', 'failed'].includes(i.phase))
  }

  return { items, pending, add, addLinks, clearFinished }
})
