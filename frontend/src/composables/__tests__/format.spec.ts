import { describe, expect, it } from 'vitest'

import { searchableLabel } from '../format'

describe('searchableLabel', () => {
  it('names what a searchable document is still doing', () => {
    expect(searchableLabel('embed', 0.4)).toBe('searchable by keywords · embedding 40%')
    expect(searchableLabel('ocr', 0.5)).toBe('searchable by keywords · OCR 50%')
    expect(searchableLabel('chunk', null)).toBe('searchable by keywords · chunk 0%')
  })
})
