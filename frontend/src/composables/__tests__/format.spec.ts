import { describe, expect, it } from 'vitest'

import { pageCitation } from '../format'

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
  })
})
