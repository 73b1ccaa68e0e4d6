import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'

import { job as baseJob } from '@/__tests__/fixtures'
import { ApiError } from '@/api/client'
import type { Job } from '@/api/documents'
import * as jobs from '@/api/jobs'
import * as upload from '@/api/upload'
import { useUploadsStore } from '../uploads'

vi.mock('@/api/upload', () => ({ uploadFile: vi.fn() }))
vi.mock('@/api/jobs', () => ({ watchJob: vi.fn(() => () => {}) }))

const uploadFile = vi.mocked(upload.uploadFile)
const watchJob = vi.mocked(jobs.watchJob)

const job = (over: Partial<Job>) => baseJob({ id: 2, ...over })
const flush = () => new Promise((r) => setTimeout(r, 0))

beforeEach(() => {
  setActivePinia(createPinia())
  vi.clearAllMocks()
})

describe('uploads store', () => {
  it('uploads with progress, then follows the ingest job to ready', async () => {
    uploadFile.mockImplementation((_file, onProgress) => {
      onProgress(0.5)
      return {
        promise: Promise.resolve({
          filename: 'a.pdf',
          status: 'queued',
          document_id: 1,
          job_id: 2,
          kind: 'pdf' as const,
        }),
        abort: () => {},
      }
    })
    const store = useUploadsStore()
    store.add([new File(['x'], 'a.pdf')])
    await flush()
    const item = store.items[0]!
    expect(item.sent).toBe(0.5)
    expect(item.phase).toBe('queued')
    const onUpdate = watchJob.mock.calls[0]![1]
    expect(watchJob.mock.calls[0]![0]).toBe(2)
    onUpdate(job({ stage: 'embed', progress: 0.7 }))
    expect(store.items[0]).toMatchObject({ phase: 'processing', stage: 'embed', progress: 0.7 })
    onUpdate(job({ status: 'done', stage: 'done', progress: 1 }))
    expect(store.items[0]!.phase).toBe('ready')
    expect(store.pending).toBe(false)
  })

  it('reports duplicates, rejections and failed jobs', async () => {
    const results = [
      Promise.resolve({
        filename: 'dup.pdf',
        status: 'duplicate' as const,
        document_id: 1,
        job_id: null,
        kind: 'pdf' as const,
      }),
      Promise.reject(
        new ApiError({
          status: 415,
          code: 'unsupported_type',
          message: 'virus.exe: unsupported file type',
        }),
      ),
      Promise.resolve({
        filename: 'bad.pdf',
        status: 'queued' as const,
        document_id: 3,
        job_id: 4,
        kind: 'pdf' as const,
      }),
    ]
    uploadFile.mockImplementation(() => ({ promise: results.shift()!, abort: () => {} }))
    const store = useUploadsStore()
    store.add([
      new File(['a'], 'dup.pdf'),
      new File(['b'], 'virus.exe'),
      new File(['c'], 'bad.pdf'),
    ])
    await flush()
    await flush()
    expect(store.items.map((i) => i.phase)).toEqual(['duplicate', 'failed', 'queued'])
    expect(store.items[1]!.error).toBe('virus.exe: unsupported file type')
    watchJob.mock.calls[0]![1](
      job({ id: 4, status: 'failed', error: 'no text layer and OCR failed' }),
    )
    expect(store.items[2]).toMatchObject({ phase: 'failed', error: 'no text layer and OCR failed' })
    store.clearFinished()
    expect(store.items).toEqual([])
  })

  it('uploads at most two files at a time', async () => {
    const resolvers: (() => void)[] = []
    uploadFile.mockImplementation(() => ({
      promise: new Promise((resolve) =>
        resolvers.push(() =>
          resolve({
            filename: 'f',
            status: 'duplicate',
            document_id: 1,
            job_id: null,
            kind: 'pdf' as const,
          }),
        ),
      ),
      abort: () => {},
    }))
    const store = useUploadsStore()
    store.add(['1', '2', '3'].map((n) => new File([n], `${n}.pdf`)))
    expect(uploadFile).toHaveBeenCalledTimes(2)
    expect(store.items.map((i) => i.phase)).toEqual(['uploading', 'uploading', 'waiting'])
    resolvers[0]!()
    await flush()
    expect(uploadFile).toHaveBeenCalledTimes(3)
  })
})
