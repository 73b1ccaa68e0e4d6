import { beforeEach, describe, expect, it, vi } from 'vitest'

import { openPdf } from '@/composables/pdfDocument'

const destroy = vi.fn()
let opened: (doc: unknown) => void = () => {}

vi.mock('pdfjs-dist', () => ({
  GlobalWorkerOptions: {},
  getDocument: () => ({
    promise: new Promise((resolve) => (opened = resolve)),
    destroy,
  }),
}))
vi.mock('pdfjs-dist/build/pdf.worker.min.mjs?url', () => ({ default: '/worker.js' }))
vi.mock('@/api/documents', () => ({ fileBytes: async () => new ArrayBuffer(8) }))

/** Wait until openPdf has asked pdf.js for the document. */
async function asked(): Promise<void> {
  opened = () => {}
  const before = opened
  await vi.waitFor(() => expect(opened).not.toBe(before))
}

describe('openPdf', () => {
  beforeEach(() => destroy.mockReset())

  it('an abort while opening stops the opening', async () => {
    const controller = new AbortController()
    void openPdf(1, 100, controller.signal).catch(() => {})
    await asked()
    controller.abort()
    expect(destroy).toHaveBeenCalledTimes(1)
  })

  it('an abort once open leaves the document alone (the next render of the page uses it)', async () => {
    const controller = new AbortController()
    const doc = { numPages: 3 }
    const opening = openPdf(1, 100, controller.signal)
    await asked()
    opened(doc)
    expect(await opening).toBe(doc)
    controller.abort()
    expect(destroy).not.toHaveBeenCalled()
  })
})
