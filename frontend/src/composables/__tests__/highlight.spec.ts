import { describe, expect, it } from 'vitest'

import { formatSpans, locate, locateQuote, parseSpans, segments } from '../highlight'

describe('locate', () => {
  const text = 'First line.\n\nThe  tide   rises\ntwice a day.'

  it('finds exact substrings', () => {
    expect(locate(text, 'First line.')).toEqual([0, 11])
  })

  it('ignores whitespace and case differences, mapping back to the original offsets', () => {
    const at = locate(text, 'the tide rises twice')!
    expect(text.slice(at[0], at[1])).toBe('The  tide   rises\ntwice')
  })

  it('returns null when absent', () => {
    expect(locate(text, 'moon')).toBeNull()
    expect(locate(text, '   ')).toBeNull()
  })

  it('finds a quote shortened with an ellipsis by its longest piece', () => {
    const at = locateQuote(text, 'The tide rises … nothing like this')!
    expect(text.slice(at[0], at[1])).toBe('The  tide   rises')
  })
})

describe('segments', () => {
  it('cuts text at range boundaries and lists the covering kinds', () => {
    const runs = segments('abcdefghij', [
      { start: 2, end: 8, kind: 'passage' },
      { start: 4, end: 6, kind: 'quote' },
    ])
    expect(runs).toEqual([
      { text: 'ab', kinds: [] },
      { text: 'cd', kinds: ['passage'] },
      { text: 'ef', kinds: ['passage', 'quote'] },
      { text: 'gh', kinds: ['passage'] },
      { text: 'ij', kinds: [] },
    ])
  })

  it('clamps ranges outside the text and keeps the text whole', () => {
    const runs = segments('abc', [
      { start: -5, end: 99, kind: 'hit' },
      { start: 2, end: 1, kind: 'quote' },
    ])
    expect(runs).toEqual([{ text: 'abc', kinds: ['hit'] }])
  })
})

describe('spans in the URL', () => {
  it('round-trips and ignores junk', () => {
    expect(
      parseSpans(
        formatSpans([
          [1, 4],
          [10, 12],
        ]),
      ),
    ).toEqual([
      [1, 4],
      [10, 12],
    ])
    expect(parseSpans('5-2,x-y,3')).toEqual([])
    expect(parseSpans(undefined)).toEqual([])
  })
})
