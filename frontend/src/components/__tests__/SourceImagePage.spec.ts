import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { fetchRoutes } from '@/__tests__/fixtures'
import type { OcrWords } from '@/composables/textMatch'
import SourceImagePage from '../SourceImagePage.vue'

// A 200 × 100 px page: "Linzensoep a la Waterman" on the first line, "4 ons linzen" below.
const OCR: OcrWords = {
  width: 200,
  height: 100,
  words: [
    [10, 10, 60, 20, 'Linzensoep'],
    [65, 10, 70, 20, 'a'],
    [75, 10, 80, 20, 'la'],
    [85, 10, 150, 20, 'Waterman'],
    [10, 40, 20, 50, '4'],
    [25, 40, 50, 50, 'ons'],
    [55, 40, 100, 50, 'linzen'],
  ],
}

beforeEach(() => {
  Element.prototype.scrollIntoView = vi.fn()
  vi.spyOn(URL, 'createObjectURL').mockReturnValue('blob:page')
  vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {})
})
afterEach(() => {
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})

function mountPage(status = 200) {
  const seen: string[] = []
  vi.stubGlobal(
    'fetch',
    fetchRoutes({
      'GET /api/documents/4/pages/2/image': (r) => {
        seen.push(r.url)
        return new Response(status === 200 ? 'png' : '{}', { status })
      },
    }),
  )
  const w = mount(SourceImagePage, {
    props: {
      docId: 4,
      pageNo: 2,
      ocr: OCR,
      passages: [
        { text: 'Linzensoep a la Waterman 4 ons linzen', kind: 'passage' as const },
        { text: 'ons linzen', kind: 'quote' as const },
      ],
    },
  })
  return { w, seen }
}

describe('SourceImagePage', () => {
  it('shows the page image with boxes over the quoted words', async () => {
    const { w, seen } = mountPage()
    await flushPromises()
    expect(w.emitted('failed')).toBeUndefined()
    expect(seen).toHaveLength(1)
    const img = w.get('img')
    expect(img.attributes('src')).toBe('blob:page')
    await img.trigger('load')
    expect(w.get('[data-testid="image-page"]').attributes('data-state')).toBe('ready')
    const quote = w.findAll('.ocr-box.quote')
    expect(quote).toHaveLength(2)
    // "ons" at x 25–50 of 200, y 40–50 of 100: in % of the page, so it scales with the image.
    expect(quote[0]!.attributes('style')).toContain('left: 12.5%')
    expect(quote[0]!.attributes('style')).toContain('top: 40%')
    expect(quote[0]!.attributes('style')).toContain('width: 12.5%')
    expect(w.findAll('.ocr-box.passage')).toHaveLength(7)
    expect(w.emitted('located')).toEqual([['ocr']])
  })

  it('says so when the image cannot be fetched', async () => {
    const { w } = mountPage(404)
    await flushPromises()
    expect(w.emitted('failed')).toHaveLength(1)
    expect(w.find('img').exists()).toBe(false)
  })
})
