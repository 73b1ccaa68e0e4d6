import { beforeEach, describe, expect, it, vi } from 'vitest'

import { openPdf, renderPage } from '@/composables/pdfDocument'

const destroy = vi.fn()
let opened: (doc: unknown) => void = () => {}

vi.mock('pdfjs-dist', () => ({
  GlobalWorkerOptions: {},
  getDocument: () => ({
    promise: new Promise((resolve) => (opened = resolve)),
    destroy,
  }),
  TextLayer: class {
    textDivs: HTMLElement[] = []
    async render(): Promise<void> {}
  },
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

/** A page whose drawings finish when the test says, as pdf.js's do: one at a time per canvas. */
function fakePage() {
  const drawings: { cancel: ReturnType<typeof vi.fn>; finish: () => void }[] = []
  const busy = new Set<HTMLCanvasElement>()
  const viewport = { width: 600, height: 800, convertToViewportRectangle: (r: number[]) => r }
  const page = {
    getViewport: () => viewport,
    getTextContent: async () => ({ items: [{ str: 'text', hasEOL: false }] }),
    render: ({ canvas }: { canvas: HTMLCanvasElement }) => {
      if (busy.has(canvas)) throw new Error('Cannot use the same canvas during multiple render()')
      busy.add(canvas)
      let finish = () => {}
      let fail: (e: Error) => void = () => {}
      const promise = new Promise<void>((resolve, reject) => {
        finish = resolve
        fail = reject
      }).finally(() => busy.delete(canvas))
      const cancel = vi.fn(() =>
        fail(Object.assign(new Error('cancelled'), { name: 'RenderingCancelledException' })),
      )
      drawings.push({ cancel, finish })
      return { promise, cancel }
    },
  }
  const pdf = { getPage: async () => page } as unknown as Parameters<typeof renderPage>[0]
  return { pdf, drawings }
}

describe('renderPage', () => {
  it('a second drawing on the same canvas cancels the first, then draws', async () => {
    const { pdf, drawings } = fakePage()
    const canvas = document.createElement('canvas')
    const first = renderPage(pdf, 1, canvas, document.createElement('div'), 600)
    await vi.waitFor(() => expect(drawings).toHaveLength(1))
    const second = renderPage(pdf, 1, canvas, document.createElement('div'), 600)
    await expect(first).rejects.toMatchObject({ name: 'RenderingCancelledException' })
    expect(drawings[0]!.cancel).toHaveBeenCalledTimes(1)
    await vi.waitFor(() => expect(drawings).toHaveLength(2))
    drawings[1]!.finish()
    expect((await second).width).toBe(600)
  })
})
