import { describe, expect, it } from 'vitest'

import { pageCitation, searchableLabel } from '../format'

describe('pageCitation', () => {
  it('cites a PDF page by its printed label and its place in the file', () => {
    expect(pageCitation('pdf', 188, '166')).toBe('p. 166 (PDF p. 188)')
    expect(pageCitation('pdf', 3, 'xii')).toBe('p. xii (PDF p. 3)')
  })

  it('cites the PDF page alone without a label, or when the label is the number', () => {
    expect(pageCitation('pdf', 188)).toBe('p. 188')
    expect(pageCitation('pdf', 188, null)).toBe('p. 188')
    expect(pageCitation('pdf', 188, '188')).toBe('p. 188')
  })

  it('names the units of other kinds', () => {
    expect(pageCitation('epub', 3)).toBe('section 3')
    expect(pageCitation('perplexity', 3)).toBe('turn 3')
    expect(pageCitation('image', 2)).toBe('p. 2')
  })

  it('cites an Office unit by its label: Word page, section, slide, rows of a sheet', () => {
    expect(pageCitation('docx', 12)).toBe('p. 12')
    expect(pageCitation('docx', 4, 'Background, ¶ 12–30')).toBe('Background, ¶ 12–30')
    expect(pageCitation('pptx', 14, 'slide 14 · Results')).toBe('slide 14 · Results')
    expect(pageCitation('odp', 2)).toBe('slide 2')
    expect(pageCitation('xlsx', 3, 'sheet Results, rows 12–40')).toBe('sheet Results, rows 12–40')
  })
})

describe('searchableLabel', () => {
  it('names what a searchable document is still doing', () => {
    expect(searchableLabel('embed', 0.4)).toBe('searchable by keywords · embedding 40%')
    expect(searchableLabel('ocr', 0.5)).toBe('searchable by keywords · OCR 50%')
    expect(searchableLabel('chunk', null)).toBe('searchable by keywords · chunk 0%')
  })
})
