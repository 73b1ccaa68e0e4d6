import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'

import type { UploadItem } from '@/stores/uploads'
import UploadRow from '../UploadRow.vue'

const item = (over: Partial<UploadItem>): UploadItem => ({
  key: 1,
  name: 'book.pdf',
  size: 4_000_000,
  phase: 'queued',
  sent: 1,
  progress: 0,
  stage: 'queued',
  stageProgress: null,
  searchable: false,
  ahead: null,
  etaS: null,
  documentId: 1,
  jobId: 2,
  error: null,
  ...over,
})

const state = (over: Partial<UploadItem>) =>
  mount(UploadRow, { props: { item: item(over) } })
    .get('.state')
    .text()

describe('UploadRow', () => {
  it('says where a queued file stands and, once measured, when it will be done', () => {
    expect(state({ ahead: 2 })).toBe('Uploaded · 2 files ahead')
    expect(state({ ahead: 1, etaS: 95 })).toBe('Uploaded · 1 file ahead · about 1 min 35 s left')
    expect(state({ ahead: 0, etaS: 0 })).toBe(
      'Uploaded · next for the workers · done in a few seconds',
    )
  })

  it('keeps the estimate while the file is read', () => {
    expect(state({ phase: 'processing', stage: 'extract', progress: 0.3, etaS: 40 })).toBe(
      'Indexing: extract 30% · about 40 s left',
    )
    expect(state({ phase: 'processing', stage: 'extract', progress: 0.3 })).toBe(
      'Indexing: extract 30%',
    )
    expect(state({ phase: 'processing', stage: '', progress: 0 })).toBe('Indexing: starting 0%')
  })
})

describe('UploadRow percentages', () => {
  it('shows one percentage, the one its bar shows', () => {
    const w = mount(UploadRow, {
      props: {
        item: item({
          phase: 'processing',
          stage: 'ocr',
          progress: 0.3,
          stageProgress: 0,
          searchable: true,
        }),
      },
    })
    expect(w.get('.state').text()).toBe('searchable by keywords · OCR 30%')
    expect(w.get('progress').attributes('value')).toBe('0.3')
  })
})
