import { describe, expect, it } from 'vitest'

import {
  joinItems,
  joinWords,
  matchQuote,
  matchRange,
  matchWords,
  normalise,
  ocrWordsOf,
  spansOf,
  storedBoxes,
  type OcrWord,
} from '../textMatch'

/** The original text a match covers. */
function found(hay: string, needle: string): string | null {
  const at = matchQuote(hay, needle)
  return at ? hay.slice(at[0], at[1]) : null
}

describe('normalise', () => {
  it('expands ligatures and maps every character back to its source', () => {
    const n = normalise('The ﬁrst ﬂow')
    expect(n.norm).toBe('the first flow')
    // "f" and "i" both come from the ligature at index 4, which ends at 5.
    expect(n.starts.slice(4, 6)).toEqual([4, 4])
    expect(n.ends.slice(4, 6)).toEqual([5, 5])
  })

  it('joins hyphenation at a line end and drops soft hyphens', () => {
    expect(normalise('hyphen-\nation').norm).toBe('hyphenation')
    expect(normalise('hyphen- \r\n  ation').norm).toBe('hyphenation')
    expect(normalise('hy\u00adphen\u00ad\nation').norm).toBe('hyphen ation')
    expect(normalise('well-known').norm).toBe('well-known') // inside a line it stays
  })

  it('collapses whitespace, or keeps letters and digits only when loose', () => {
    expect(normalise('  a \t\n b  ').norm).toBe('a b')
    expect(normalise('“Safe” harbor’s — § 512(c)', true).norm).toBe('safeharbors512c')
    expect(normalise('café', true).norm).toBe(normalise('cafe\u0301', true).norm)
  })
})

describe('matchRange / matchQuote', () => {
  it('finds a quote across ligatures, hyphenation and whitespace', () => {
    const page = 'Service pro-\nviders must ﬁle   a notiﬁcation\nwith the Oﬃce.'
    expect(found(page, 'providers must file a notification with the Office')).toBe(
      'pro-\nviders must ﬁle   a notiﬁcation\nwith the Oﬃce',
    )
  })

  it('tolerates spacing and punctuation changes on the second try', () => {
    // pdf.js splits words into items without spaces between them; quotes were straightened.
    const page = 'the "safe harbor"provisions of§512'
    expect(found(page, 'the “safe harbor” provisions of § 512')).toBe(page)
  })

  it('finds a quote shortened with an ellipsis by its longest piece', () => {
    const page = 'One sentence here. The notice must identify the copyrighted work claimed.'
    expect(found(page, 'The notice must identify … nothing like this at all here')).toBe(
      'The notice must identify',
    )
  })

  it('finds a long passage by its ends when its middle changed', () => {
    const head =
      'The beginning of a long passage that goes on and on for quite a long while, longer than the anchor '
    const tail = 'and then it finally comes to an end after many more words than that. '
    const middle = 'middle words '.repeat(10)
    const page = `${head}RUNNING HEADER 12 ${middle}${tail}`
    const passage = `${head}${middle}${tail}`
    const at = matchRange(page, passage)!
    // Loose matching keeps letters and digits: the range ends on the last one ("that").
    expect(page.slice(...at)).toBe(page.trimEnd().slice(0, -1))
  })

  it('finds a sentence with a footnote marker and split small capitals in between', () => {
    // As pdf.js reads dmca-summary.pdf page 8; the extracted text has neither the "3" nor the gaps.
    const page =
      'T ITLE II: O NLINE C OPYRIGHT I NFRINGEMENT L IABILITY L IMITATION\nTitle II of the DMCA ' +
      'adds a new section 512 to the Copyright Act to create 3 four new limitations on ' +
      'liability for copyright infringement by online service providers.'
    const quote =
      'Title II of the DMCA adds a new section 512 to the Copyright Act to create four new ' +
      'limitations on liability for copyright infringement by online service providers.'
    expect(found(page, quote)).toBe(page.slice(page.indexOf('Title II'), -1))
    expect(found(page, 'TITLE II: ONLINE COPYRIGHT INFRINGEMENT LIABILITY')).toBe(
      'T ITLE II: O NLINE C OPYRIGHT I NFRINGEMENT L IABILITY',
    )
    // Pieces found too far apart are no match.
    const far = `${quote.slice(0, 60)} ${'unrelated words '.repeat(40)} ${quote.slice(60)}`
    expect(matchQuote(far, quote)).toBeNull()
  })

  it('starts from an offset and says null when the text is not there', () => {
    expect(matchRange('abc abc', 'abc', 1)).toEqual([4, 7])
    expect(matchQuote('nothing to see', 'a sentence that is not on the page')).toBeNull()
    expect(matchRange('abc', '   ')).toBeNull()
  })
})

describe('mapping a match back to text-layer spans', () => {
  const items = [
    { str: 'Section 512 limits the liability of ser-', hasEOL: true },
    { str: 'vice providers for ', hasEOL: false },
    { str: 'ﬁve', hasEOL: false },
    { str: ' categories of activity.', hasEOL: true },
  ]

  it('cuts the range into the spans it covers, with the part of each', () => {
    const { text, starts } = joinItems(items)
    expect(starts).toEqual([0, 41, 60, 63])
    const at = matchQuote(text, 'liability of service providers for five categories')!
    expect(spansOf(starts, text.length, at)).toEqual([
      { index: 0, start: 23, end: 41 },
      { index: 1, start: 0, end: 19 },
      { index: 2, start: 0, end: 3 },
      { index: 3, start: 0, end: 11 },
    ])
  })
})

describe('OCR words', () => {
  const words: OcrWord[] = [
    [72, 100, 120, 112, 'Replace'],
    [124, 100, 160, 112, 'the'],
    [164, 100, 230, 112, 'hydrau-'],
    [72, 116, 110, 128, 'lic'],
    [114, 116, 150, 128, 'pump.'],
    [154, 116, 190, 128, 'Then'],
  ]

  it('joins words with spaces, and with a newline where a line starts', () => {
    expect(joinWords(words).text).toBe('Replace the hydrau-\nlic pump. Then')
  })

  it('finds the words of a quote, across a hyphenated line end', () => {
    expect(matchWords(words, 'the hydraulic pump.')).toEqual([1, 2, 3, 4])
    expect(matchWords(words, 'not on this page at all')).toEqual([])
  })

  it("takes a highlight's occurrence nearest its span when the quote is there twice", () => {
    const twice: OcrWord[] = [
      [72, 100, 120, 112, 'check'],
      [124, 100, 160, 112, 'the'],
      [164, 100, 230, 112, 'valve'],
      [72, 116, 110, 128, 'and'],
      [72, 132, 120, 144, 'check'],
      [124, 132, 160, 144, 'the'],
      [164, 132, 230, 144, 'valve'],
    ]
    expect(matchWords(twice, 'check the valve')).toEqual([0, 1, 2])
    expect(matchWords(twice, 'check the valve', 0.05)).toEqual([0, 1, 2])
    expect(matchWords(twice, 'check the valve', 0.7)).toEqual([4, 5, 6])
    expect(matchWords(twice, '   ', 0.7)).toEqual([])
  })

  it("draws a highlight's stored boxes: fractions as they are, Zotero's PDF points flipped", () => {
    const note = { kind: 'note' as const, color: '#ff6666' }
    expect(storedBoxes([{ x: 0.1, y: 0.2, w: 0.3, h: 0.05 }], note)).toEqual([
      { ...note, left: '10.000%', top: '20.000%', width: '30.000%', height: '5.000%' },
    ])
    // A 600 x 800 point page at scale 1: y from the bottom becomes y from the top.
    const fromPdf = {
      rect: ([x1, y1, x2, y2]: number[]) => [x1!, 800 - y1!, x2!, 800 - y2!],
      width: 600,
      height: 800,
    }
    expect(storedBoxes([{ pdf: [60, 400, 240, 560] }], note, fromPdf)).toEqual([
      { ...note, left: '10.000%', top: '30.000%', width: '30.000%', height: '20.000%' },
    ])
    // Without the page's PDF size (an image file's page), or malformed: nothing drawn.
    expect(storedBoxes([{ pdf: [60, 400, 240, 560] }], note)).toEqual([])
    expect(storedBoxes([{ x: 'a' }, { pdf: [1, 2] }, { x: 2, y: 0, w: 1, h: 1 }], note)).toEqual([])
    expect(storedBoxes(null, note)).toEqual([])
  })

  it('reads ocr_words from the page metadata, or null when absent or malformed', () => {
    const meta = {
      ocr_words: { width: 612, height: 792, unit: 'pt', words: [...words, [1, 2, 'x'], 'junk'] },
    }
    expect(ocrWordsOf(meta)).toEqual({ width: 612, height: 792, words })
    expect(ocrWordsOf({})).toBeNull()
    expect(ocrWordsOf({ ocr_words: { width: 0, height: 1, words: [] } })).toBeNull()
    expect(ocrWordsOf(null)).toBeNull()
  })
})
