// pdf.js, loaded on first use (its ~400 KB stay out of the main bundle) with its worker bundled
// by Vite as an asset of our own origin: no CDN, and nginx serves it like any other /assets/ file.
import type { PDFDocumentProxy, RenderTask } from 'pdfjs-dist'
import type { TextItem } from 'pdfjs-dist/types/src/display/api'

import { ApiError } from '@/api/client'
import { fileBytes } from '@/api/documents'

type PdfJs = typeof import('pdfjs-dist')

let lib: Promise<PdfJs> | null = null

export function loadPdfJs(): Promise<PdfJs> {
  lib ??= Promise.all([
    import('pdfjs-dist'),
    import('pdfjs-dist/build/pdf.worker.min.mjs?url'),
  ]).then(([pdfjs, worker]) => {
    pdfjs.GlobalWorkerOptions.workerSrc = worker.default
    return pdfjs
  })
  // A failed chunk load (offline, a redeploy) is tried again next time.
  lib.catch(() => (lib = null))
  return lib
}

/** Bigger files are not rendered in the browser: the text view is shown instead. */
export const MAX_RENDER_BYTES = 150 * 1024 * 1024

export class PdfRenderError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PdfRenderError'
  }
}

/** Why pdf.js could not show the file, in words for the reader. */
export function renderFailure(err: unknown): string {
  const name = (err as { name?: unknown } | null)?.name
  if (err instanceof PdfRenderError) return err.message
  if (err instanceof ApiError) return `the file could not be fetched (${err.message})`
  if (name === 'PasswordException') return 'the PDF is encrypted with a password'
  if (name === 'InvalidPDFException') return 'the file is not a PDF that pdf.js can read'
  if (name === 'MissingPDFException') return 'the file is missing'
  return err instanceof Error && err.message ? err.message : 'pdf.js could not render the file'
}

/** Fetch a document's original, or its PDF rendition (with the API token), and open it in
 * pdf.js. */
export async function openPdf(
  docId: number,
  byteSize: number,
  signal?: AbortSignal,
  rendition = false,
): Promise<PDFDocumentProxy> {
  if (byteSize > MAX_RENDER_BYTES) {
    const mb = Math.round(byteSize / (1024 * 1024))
    throw new PdfRenderError(`the file is too large to render here (${mb} MB)`)
  }
  const [pdfjs, bytes] = await Promise.all([loadPdfJs(), fileBytes(docId, signal, rendition)])
  // The bytes, not a URL: pdf.js's own fetch would not send the API token.
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), isEvalSupported: false })
  // The signal stops the opening only: once open, the document is the caller's to destroy (an
  // abort later, for the next render of the page, must not destroy the document it renders).
  const destroy = (): void => void task.destroy()
  signal?.addEventListener('abort', destroy, { once: true })
  try {
    return await task.promise
  } finally {
    signal?.removeEventListener('abort', destroy)
  }
}

export interface RenderedPage {
  /** CSS pixels of the rendered page. */
  width: number
  height: number
  scale: number
  /** The page's text items, one per text-layer span in `spans` (same order). */
  items: Pick<TextItem, 'str' | 'hasEOL'>[]
  spans: HTMLElement[]
  /** A rectangle in PDF points ([x1, y1, x2, y2], origin bottom-left) in CSS pixels of the
   * rendered page (pdf.js's viewport: its crop box and rotation applied). */
  fromPdf: (rect: number[]) => number[]
}

/** The drawing running on each canvas: pdf.js refuses a second one on the same canvas. */
const drawing = new WeakMap<HTMLCanvasElement, RenderTask>()

/**
 * Draw page `pageNo` of `pdf` on `canvas`, `width` CSS pixels wide, and lay its text layer out
 * in `textLayer` (transparent spans over the glyphs, as pdf.js's own viewer does). A drawing
 * still running on the canvas (the page rendered again before it finished: its passages came,
 * a note was saved) is cancelled first; its own call then rejects with pdf.js's
 * RenderingCancelledException.
 */
export async function renderPage(
  pdf: PDFDocumentProxy,
  pageNo: number,
  canvas: HTMLCanvasElement,
  textLayer: HTMLElement,
  width: number,
): Promise<RenderedPage> {
  const pdfjs = await loadPdfJs()
  const page = await pdf.getPage(pageNo)
  const scale = width / page.getViewport({ scale: 1 }).width
  const viewport = page.getViewport({ scale })
  for (let before = drawing.get(canvas); before; before = drawing.get(canvas)) {
    before.cancel()
    await before.promise.catch(() => undefined)
    if (drawing.get(canvas) === before) drawing.delete(canvas)
  }
  const ratio = window.devicePixelRatio || 1
  canvas.width = Math.floor(viewport.width * ratio)
  canvas.height = Math.floor(viewport.height * ratio)
  canvas.style.width = `${viewport.width}px`
  canvas.style.height = `${viewport.height}px`
  const transform = ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0]
  const task = page.render({ canvas, viewport, transform })
  drawing.set(canvas, task)
  try {
    await task.promise
  } finally {
    if (drawing.get(canvas) === task) drawing.delete(canvas)
  }
  const content = await page.getTextContent()
  textLayer.replaceChildren()
  const layer = new pdfjs.TextLayer({ textContentSource: content, container: textLayer, viewport })
  await layer.render()
  const items = content.items.filter((i): i is TextItem => 'str' in i)
  return {
    width: viewport.width,
    height: viewport.height,
    scale,
    items,
    spans: layer.textDivs,
    fromPdf: (rect) => viewport.convertToViewportRectangle(rect),
  }
}
