import { flushPromises, mount } from '@vue/test-utils'
import type { PDFDocumentProxy } from 'pdfjs-dist'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { doc, fetchRoutes, json, page } from '@/__tests__/fixtures'
import { openPdf, renderPage } from '@/composables/pdfDocument'
import SourceView from '../SourceView.vue'

// pdf.js needs a real browser (canvas, workers): here its two seams are stubbed, and the
// browser test (tests/e2e/test_browser.py) renders real PDFs in Chromium.
vi.mock('@/composables/pdfDocument', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@/composables/pdfDocument')>()),
  openPdf: vi.fn(),
  renderPage: vi.fn(),
}))

const destroy = vi.fn()

/** pdf.js as renderPage leaves it: one text-layer span per item, in the layer's element. */
function textLayerOf(items: { str: string; hasEOL: boolean }[]) {
  vi.mocked(openPdf).mockResolvedValue({ destroy } as unknown as PDFDocumentProxy)
  vi.mocked(renderPage).mockImplementation(async (_pdf, _n, _canvas, layer) => {
    const spans = items.map((item) => {
      const span = document.createElement('span')
      span.textContent = item.str
      layer.append(span)
      return span
    })
    // Scale 1, no crop box: PDF points from the bottom-left corner, flipped.
    const fromPdf = ([x1, y1, x2, y2]: number[]) => [x1!, 792 - y1!, x2!, 792 - y2!]
    return { width: 612, height: 792, scale: 1, items, spans, fromPdf }
  })
}

beforeEach(() => {
  localStorage.clear()
  Element.prototype.scrollIntoView = vi.fn()
})
afterEach(() => {
  vi.unstubAllGlobals()
  vi.mocked(openPdf).mockReset()
  vi.mocked(renderPage).mockReset()
})

async function mountAt(url: string) {
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/library', component: { template: '<div />' } },
      { path: '/library/:id', name: 'document', component: { template: '<div />' } },
      { path: '/library/:id/pages/:page', name: 'source', component: SourceView },
    ],
  })
  await router.push(url)
  const w = mount(SourceView, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

describe('SourceView', () => {
  it('highlights the cited chunk, the quote and the matches on the right page', async () => {
    localStorage.setItem('quire.sourceView', 'text') // the reader chose the text view
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { title: 'Tides' })),
        'GET /api/documents/3/pages/2': () => json(page()),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8&hl=4-8&quote=rises%20twice%20a%20day')
    expect(w.get('h1').text()).toBe('Tides')
    expect(w.get('[data-testid="crumb-place"]').text()).toBe('p. 2')
    expect(w.get('header [data-testid="place"]').text()).toBe('p. 2')
    const passage = w
      .findAll('mark.passage')
      .map((m) => m.element.textContent)
      .join('')
    expect(passage).toBe('The tide rises twice a day near the harbor. Whales follow it.')
    expect(w.get('mark.hit').text()).toBe('tide')
    expect(w.get('mark.quote').text()).toBe('rises twice a day')
    expect(w.get('[data-testid="original"]').attributes('href')).toBe(
      '/api/documents/3/file#page=2',
    )
    expect(Element.prototype.scrollIntoView).toHaveBeenCalled()
  })

  it('links a Perplexity turn to its thread', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/5': () =>
          json(
            doc(5, {
              kind: 'perplexity',
              metadata: { url: 'https://www.perplexity.ai/search/x-1' },
            }),
          ),
        'GET /api/documents/5/pages/1': () =>
          json(page({ document_id: 5, page: 1, metadata: { urls: ['https://example.org/a'] } })),
      }),
    )
    const w = await mountAt('/library/5/pages/1')
    expect(w.get('a[href="https://www.perplexity.ai/search/x-1"]').text()).toContain(
      'Perplexity thread',
    )
    expect(w.get('[data-testid="original"]').attributes('href')).toBe('/api/documents/5/file')
    expect(w.find('a[href="https://example.org/a"]').exists()).toBe(true)
    expect(w.findAll('mark')).toHaveLength(0)
  })

  it('shows a saved web page as its text, with its site, date and the live page', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/6': () =>
          json(
            doc(6, {
              kind: 'web',
              title: 'Tides',
              metadata: {
                url: 'https://example.org/tides#top',
                site: 'Example',
                published: '2020-01-02',
              },
            }),
          ),
        'GET /api/documents/6/pages/2': () =>
          json(
            page({
              document_id: 6,
              heading_path: 'Coast > Intro line.',
            }),
          ),
      }),
    )
    const w = await mountAt('/library/6/pages/2?chunk=8&quote=rises%20twice%20a%20day')
    expect(w.get('[data-testid="web-meta"]').text()).toBe('Example · 2020-01-02')
    // The stored copy's text, the quote marked; never the page's HTML.
    expect(w.get('[data-testid="page-text"] mark.quote').text()).toBe('rises twice a day')
    expect(w.get('[data-testid="live-original"]').attributes('href')).toBe(
      'https://example.org/tides#:~:text=rises%20twice%20a%20day',
    )
    expect(w.get('[data-testid="original"]').text()).toContain('Saved copy')
    // The section's heading line is shown as a heading (not a highlight), the rest as text.
    expect(w.findAll('[data-testid="page-text"] strong.heading').map((h) => h.text())).toEqual([
      'Intro line.',
    ])
    expect(w.find('[data-testid="not-found"]').exists()).toBe(false)
  })

  it('shows the API error for a missing page', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3)),
        'GET /api/documents/3/pages/99': () =>
          json(
            {
              error: {
                status: 404,
                code: 'not_found',
                message: 'document 3 has no page 99 (it has 5)',
              },
            },
            404,
          ),
      }),
    )
    const w = await mountAt('/library/3/pages/99')
    expect(w.get('[role="alert"]').text()).toBe('document 3 has no page 99 (it has 5)')
  })

  it('renders a PDF page and marks the quote on the text-layer spans it covers', async () => {
    textLayerOf([
      { str: 'Intro line.', hasEOL: true },
      { str: 'The tide ri-', hasEOL: true },
      { str: 'ses twice a day near the ', hasEOL: false },
      { str: 'harbor. Whales follow it.', hasEOL: true },
    ])
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { title: 'Tides' })),
        'GET /api/documents/3/pages/2': () => json(page()),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8&quote=rises%20twice%20a%20day')
    expect(vi.mocked(renderPage).mock.calls[0]![1]).toBe(2)
    const pdfPage = w.get('[data-testid="pdf-page"]')
    expect(pdfPage.attributes('data-state')).toBe('ready')
    expect(pdfPage.attributes('data-match')).toBe('text')
    const quote = w.findAll('.textLayer mark.pdf-hl.quote').map((m) => m.text())
    expect(quote).toEqual(['ri-', 'ses twice a day'])
    const passage = w.findAll('.textLayer mark.pdf-hl.passage').map((m) => m.element.textContent)
    expect(passage.join('|')).toBe(
      'The tide |ri-|ses twice a day| near the |harbor. Whales follow it.',
    )
    // Marks live inside the spans (so they sit over the glyphs), and the text is unchanged.
    expect(w.findAll('.textLayer > span').map((s) => s.element.textContent)[2]).toBe(
      'ses twice a day near the ',
    )
    expect(w.find('[data-testid="page-text"]').exists()).toBe(false)
    expect(w.find('[data-testid="not-found"]').exists()).toBe(false)
    expect(Element.prototype.scrollIntoView).toHaveBeenCalled()

    // The toggle keeps the text view, and remembers the choice.
    await w.get('button[aria-pressed="false"]').trigger('click')
    expect(w.find('[data-testid="pdf-page"]').exists()).toBe(false)
    expect(w.get('mark.quote').text()).toBe('rises twice a day')
    expect(localStorage.getItem('quire.sourceView')).toBe('text')
    expect(destroy).toHaveBeenCalled()
  })

  it('draws boxes over the OCR words of a scanned page', async () => {
    textLayerOf([])
    const ocr_words = {
      width: 600,
      height: 800,
      unit: 'pt',
      words: [
        [60, 100, 120, 112, 'Replace'],
        [126, 100, 150, 112, 'the'],
        [156, 100, 230, 112, 'hydrau-'],
        [60, 120, 90, 132, 'lic'],
        [96, 120, 150, 132, 'pump.'],
      ],
    }
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3)),
        'GET /api/documents/3/pages/2': () =>
          json(
            page({ source: 'ocr', text: 'Replace the hydraulic pump.', metadata: { ocr_words } }),
          ),
      }),
    )
    const w = await mountAt('/library/3/pages/2?quote=the%20hydraulic%20pump')
    expect(w.get('[data-testid="pdf-page"]').attributes('data-match')).toBe('ocr')
    const boxes = w.findAll('.ocr-box.quote')
    expect(boxes).toHaveLength(4)
    expect(boxes[0]!.attributes('style')).toContain('left: 21%')
    expect(boxes[0]!.attributes('style')).toContain('top: 12.5%')
    expect(boxes[0]!.attributes('style')).toContain('width: 4%')
  })

  it('falls back to the text view with a message when pdf.js cannot open the file', async () => {
    vi.mocked(openPdf).mockRejectedValue(
      Object.assign(new Error('No password given'), { name: 'PasswordException' }),
    )
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3)),
        'GET /api/documents/3/pages/2': () => json(page()),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8&quote=rises%20twice%20a%20day')
    expect(w.get('[data-testid="render-error"]').text()).toBe(
      'The page could not be rendered (the PDF is encrypted with a password); showing the extracted text.',
    )
    expect(w.find('[data-testid="pdf-page"]').exists()).toBe(false)
    expect(w.find('[data-testid="view-toggle"]').exists()).toBe(false)
    expect(w.get('mark.quote').text()).toBe('rises twice a day')
  })

  it('falls back on a file too large to render, without fetching it', async () => {
    const { openPdf: realOpen } = await vi.importActual<typeof import('@/composables/pdfDocument')>(
      '@/composables/pdfDocument',
    )
    vi.mocked(openPdf).mockImplementation(realOpen)
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { byte_size: 400 * 1024 * 1024 })),
        'GET /api/documents/3/pages/2': () => json(page()),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8')
    expect(w.get('[data-testid="render-error"]').text()).toContain(
      'the file is too large to render here (400 MB)',
    )
    expect(w.findAll('mark.passage').length).toBeGreaterThan(0)
  })

  it('cites the printed page label beside the PDF page', async () => {
    textLayerOf([])
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3)),
        'GET /api/documents/3/pages/2': () =>
          json(
            page({
              page: 188,
              page_count: 400,
              page_label: '166',
              place: 'p. 166 (PDF p. 188)',
              section: 'Graphs > NetworkX',
            }),
          ),
      }),
    )
    const w = await mountAt('/library/3/pages/2')
    // The breadcrumb and the header name the page the same way: the API's place.
    expect(w.get('[data-testid="crumb-place"]').text()).toBe('p. 166 (PDF p. 188)')
    expect(w.get('header [data-testid="place"]').text()).toBe('p. 166 (PDF p. 188)')
    expect(w.get('header').text()).toContain('p. 166 (PDF p. 188) · Graphs > NetworkX')
    expect(w.text()).not.toMatch(/Page 188|of 400/)
  })

  it('shows EPUB sections as text only, without the toggle', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { kind: 'epub' })),
        'GET /api/documents/3/pages/2': () => json(page()),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8')
    expect(w.find('[data-testid="view-toggle"]').exists()).toBe(false)
    expect(w.find('[data-testid="page-text"]').exists()).toBe(true)
    expect(openPdf).not.toHaveBeenCalled()
  })

  it('shows a Word page from its rendition, on the page LibreOffice puts it', async () => {
    textLayerOf([
      { str: 'The tide rises twice a day near the harbor. Whales follow it.', hasEOL: true },
    ])
    const rendition = { pages: 20, bytes: 4096, basis: 'word' }
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { kind: 'docx', metadata: { rendition } })),
        'GET /api/documents/3/pages/2': () => json(page({ metadata: { rendition_page: 3 } })),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8')
    expect(openPdf).toHaveBeenCalledWith(3, 4096, expect.anything(), true)
    expect(vi.mocked(renderPage).mock.calls[0]![1]).toBe(3)
    expect(w.get('[data-testid="pdf-page"]').attributes('data-match')).toBe('text')
    expect(w.get('[data-testid="rendition-notice"]').text()).toBe(
      "Word's page 2 is shown as LibreOffice lays it out, on its page 3.",
    )
    expect(w.find('[data-testid="view-toggle"]').exists()).toBe(true)
  })

  it('shows a slide as its rendition page, without a notice', async () => {
    textLayerOf([])
    const rendition = { pages: 5, bytes: 4096, basis: 'slides' }
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { kind: 'pptx', metadata: { rendition } })),
        'GET /api/documents/3/pages/2': () => json(page({ metadata: { rendition_page: 2 } })),
      }),
    )
    const w = await mountAt('/library/3/pages/2')
    expect(vi.mocked(renderPage).mock.calls[0]![1]).toBe(2)
    expect(w.find('[data-testid="rendition-notice"]').exists()).toBe(false)
  })

  it('says how to get the rendered view when no renderer is installed', async () => {
    const note =
      'no renderer is installed: apt install libreoffice-impress-nogui to see the original'
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () =>
          json(doc(3, { kind: 'pptx', metadata: { rendition_note: note } })),
        'GET /api/documents/3/pages/2': () => json(page()),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8')
    expect(openPdf).not.toHaveBeenCalled()
    expect(w.get('[data-testid="text-only-notice"]').text()).toBe(
      `Showing the extracted text: ${note}.`,
    )
    expect(w.findAll('mark.passage').length).toBeGreaterThan(0)
  })

  it('shows an image document as its page image, not through pdf.js', async () => {
    vi.spyOn(URL, 'createObjectURL').mockReturnValue('blob:page')
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/documents/3': () => json(doc(3, { kind: 'image' })),
        'GET /api/documents/3/pages/2': () => json(page({ source: 'ocr' })),
        'GET /api/documents/3/pages/2/image': () => new Response('png'),
      }),
    )
    const w = await mountAt('/library/3/pages/2?chunk=8')
    expect(w.find('[data-testid="view-toggle"]').exists()).toBe(true)
    expect(w.get('[data-testid="image-page"] img').attributes('src')).toBe('blob:page')
    expect(w.get('[data-testid="crumb-place"]').text()).toBe('p. 2')
    expect(openPdf).not.toHaveBeenCalled()
    vi.restoreAllMocks()
  })
})
