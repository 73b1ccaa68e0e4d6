// Find a cited passage in the text of a rendered PDF page (pdf.js text-layer items, or OCR
// words) although extraction changed it: ligatures ("ﬁ" → "fi"), hyphenation joined
// ("hyphen-\nation" → "hyphenation"), soft hyphens, whitespace, curly quotes. Both sides are
// normalised with a map back to the original indices, so a match is a range of the page's text
// that is then cut into the text-layer spans (or OCR words) it covers.
//
//   const { text, starts } = joinItems(textContent.items)
//   const at = matchQuote(text, 'the safe harbor provisions')  // [start, end) in `text`
//   const pieces = at ? spansOf(starts, text.length, at) : []  // [{ index, start, end }]

import { findQuote } from './highlight'

export interface Normalised {
  /** The normalised text. */
  norm: string
  /** For each character of `norm`, where its source character starts in the original. */
  starts: number[]
  /** ... and where that source character ends (a ligature or a surrogate pair is one). */
  ends: number[]
}

const FOLD: Record<string, string> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
  '\u201b': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2212': '-',
}
const SOFT_HYPHEN = '\u00ad'
const HYPHENS = new Set(['-', '\u2010', '\u2011'])
// A hyphen ending a line: the word goes on on the next line ("hyphen-\nation").
const LINE_BREAK_AFTER = /^[ \t]*\r?\n\s*/
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u

/**
 * Normalise for matching: NFKC, case folded, soft hyphens and line-end hyphens dropped,
 * whitespace collapsed to one space. `loose` keeps letters and digits only (NFKD, so accents go
 * too): the second try, for text whose spacing or punctuation extraction changed.
 */
export function normalise(text: string, loose = false): Normalised {
  let norm = ''
  const starts: number[] = []
  const ends: number[] = []
  let space = false
  let i = 0
  while (i < text.length) {
    const cp = text.codePointAt(i)!
    const ch = String.fromCodePoint(cp)
    const next = i + ch.length
    if (ch === SOFT_HYPHEN) {
      i = next
      continue
    }
    if (HYPHENS.has(ch)) {
      const brk = LINE_BREAK_AFTER.exec(text.slice(next, next + 64))
      if (brk && next + brk[0].length < text.length) {
        i = next + brk[0].length
        continue
      }
    }
    if (/\s/u.test(ch)) {
      if (!loose && !space && norm.length) {
        norm += ' '
        starts.push(i)
        ends.push(next)
      }
      space = true
      i = next
      continue
    }
    space = false
    const folded = (FOLD[ch] ?? ch).normalize(loose ? 'NFKD' : 'NFKC').toLowerCase()
    for (const c of folded) {
      if (loose && !LETTER_OR_DIGIT.test(c)) continue
      norm += c
      for (let k = 0; k < c.length; k++) {
        starts.push(i)
        ends.push(next)
      }
    }
    i = next
  }
  if (norm.endsWith(' ')) {
    norm = norm.slice(0, -1)
    starts.pop()
    ends.pop()
  }
  return { norm, starts, ends }
}

function firstAtOrAfter(starts: number[], from: number): number {
  let k = 0
  while (k < starts.length && starts[k]! < from) k++
  return k
}

// The last try, for what extraction changed inside a passage (a footnote marker dropped, a
// running header or a figure in the middle, small capitals split): the passage cut into pieces
// of PIECE letters, found in order, each no further from the first than the passage allows.
// Enough of them found, the range runs from the first to the last.
const PIECE = 24

function piecewise(h: Normalised, n: string, from: number): [number, number] | null {
  const count = Math.floor(n.length / PIECE)
  if (count < 2) return null
  let first = -1
  let firstAt = 0
  let end = -1
  let found = 0
  let cursor = from
  for (let k = 0; k < count; k++) {
    // The last piece ends where the passage ends.
    const offset = k === count - 1 ? n.length - PIECE : k * PIECE
    const at = h.norm.indexOf(n.slice(offset, offset + PIECE), cursor)
    if (at === -1) continue
    if (first !== -1 && at - first > 1.5 * (offset - firstAt) + 2 * PIECE) continue
    if (first === -1) {
      first = at
      firstAt = offset
    }
    end = at + PIECE
    cursor = end
    found++
  }
  if (first === -1 || found < Math.max(2, Math.ceil(count / 2))) return null
  return [h.starts[first]!, h.ends[end - 1]!]
}

/** Where `needle` is in `hay` after normalising both: [start, end) in `hay`, or null. */
export function matchRange(hay: string, needle: string, from = 0): [number, number] | null {
  for (const loose of [false, true]) {
    const h = normalise(hay, loose)
    const n = normalise(needle, loose).norm
    if (!n) continue
    const start = firstAtOrAfter(h.starts, from)
    const at = h.norm.indexOf(n, start)
    if (at !== -1) return [h.starts[at]!, h.ends[at + n.length - 1]!]
    if (loose) return piecewise(h, n, start)
  }
  return null
}

/** A quote's [start, end) in the page's text; a quote shortened with "…" by its longest piece. */
export function matchQuote(hay: string, quote: string, from = 0): [number, number] | null {
  return findQuote(quote, (q) => matchRange(hay, q, from))
}

/** pdf.js text-content items as one string (a newline where a line ends), and where each starts. */
export function joinItems(items: { str: string; hasEOL?: boolean }[]): {
  text: string
  starts: number[]
} {
  let text = ''
  const starts: number[] = []
  for (const item of items) {
    starts.push(text.length)
    text += item.str
    if (item.hasEOL) text += '\n'
  }
  return { text, starts }
}

export interface Piece {
  /** Which item (text-layer span, OCR word). */
  index: number
  /** The covered part of that item's own text, [start, end). */
  start: number
  end: number
}

/** The items a range of the joined text covers, each with the part of its text it covers. */
export function spansOf(starts: number[], total: number, [a, b]: [number, number]): Piece[] {
  const out: Piece[] = []
  for (let k = 0; k < starts.length; k++) {
    const s = starts[k]!
    const e = k + 1 < starts.length ? starts[k + 1]! : total
    const lo = Math.max(a, s)
    const hi = Math.min(b, e)
    if (hi > lo) out.push({ index: k, start: lo - s, end: hi - s })
  }
  return out
}

/** One OCR word: [x0, y0, x1, y1, text] from the page's top-left corner, in points (a PDF
 * page) or pixels (an image file's page). */
export type OcrWord = [number, number, number, number, string]

export interface OcrWords {
  width: number
  height: number
  words: OcrWord[]
}

/** The page metadata's `ocr_words`, or null when it is missing or not in the expected shape. */
export function ocrWordsOf(metadata: Record<string, unknown> | null | undefined): OcrWords | null {
  const raw = metadata?.ocr_words as Partial<OcrWords> | undefined
  if (!raw || typeof raw !== 'object') return null
  const { width, height, words } = raw
  if (!(Number(width) > 0 && Number(height) > 0) || !Array.isArray(words)) return null
  const ok = words.filter(
    (w): w is OcrWord =>
      Array.isArray(w) &&
      w.length >= 5 &&
      w.slice(0, 4).every((n) => typeof n === 'number' && Number.isFinite(n)) &&
      typeof w[4] === 'string',
  )
  return { width: Number(width), height: Number(height), words: ok }
}

/**
 * OCR words as text for matching: a space between words, a newline where the next word starts
 * a new line (it begins left of where the last one ended), so that a line-end hyphen joins.
 */
export function joinWords(words: OcrWord[]): { text: string; starts: number[] } {
  let text = ''
  const starts: number[] = []
  words.forEach((w, k) => {
    if (k > 0) {
      const prev = words[k - 1]!
      text += w[0] < prev[2] || w[1] >= prev[3] ? '\n' : ' '
    }
    starts.push(text.length)
    text += w[4]
  })
  return { text, starts }
}

/** The indices of the OCR words that hold the quote (empty when it is not found). */
export function matchWords(words: OcrWord[], quote: string): number[] {
  const { text, starts } = joinWords(words)
  const at = matchQuote(text, quote)
  return at ? spansOf(starts, text.length, at).map((p) => p.index) : []
}

/** A box over an OCR word of a cited passage, in % of the page (so it scales with the page). */
export interface OcrBox {
  kind: 'passage' | 'quote' | 'note'
  left: string
  top: string
  width: string
  height: string
}

/** Boxes over the OCR words that hold each passage. */
export function ocrBoxes(
  ocr: OcrWords,
  passages: { text: string; kind: OcrBox['kind'] }[],
): OcrBox[] {
  const pct = (v: number, of: number) => `${((100 * v) / of).toFixed(3)}%`
  const out: OcrBox[] = []
  for (const p of passages) {
    for (const k of matchWords(ocr.words, p.text)) {
      const [x0, y0, x1, y1] = ocr.words[k]!
      out.push({
        kind: p.kind,
        left: pct(x0, ocr.width),
        top: pct(y0, ocr.height),
        width: pct(x1 - x0, ocr.width),
        height: pct(y1 - y0, ocr.height),
      })
    }
  }
  return out
}

// A PDF table's row, as the page text writes it (backend formats/pdf/rows.py):
// "Header: value · Header: value", or bare values "C · Facebook: 0.61", or "Key: value". The
// rendered page has the values in the row's cells and the headers elsewhere (the header row),
// so the row is found by its values: each within ROW_WINDOW characters of where the first is
// (in order where they are in order: a wrapped cell's second line may come after the next
// cells), a value not found whole by its words. A key printed right before its value (a
// two-column key/value table) is marked with it.
const ROW_SEPARATOR = ' \u00b7 '
const ROW_WINDOW = 800
const WORD_GAP = 120
const HEADED = /^([^:]{1,60}?):\s+(.+)$/s
// Where a row starts: at most this many places of its first value are tried.
const MAX_STARTS = 200
const WORDISH = /[\p{L}\p{N}]/u
const KEY_VALUE_MAX = 60

export interface RowCell {
  label: string | null
  value: string
}

/** The cells of a quoted table row, or null when the quote is not in row form. */
export function rowCells(quote: string): RowCell[] | null {
  const parts = quote
    .split(ROW_SEPARATOR)
    .map((p) => p.trim())
    .filter(Boolean)
  const cells = parts.map((part) => {
    const m = HEADED.exec(part)
    return m ? { label: m[1]!.trim(), value: m[2]!.trim() } : { label: null, value: part }
  })
  if (parts.length >= 2) return cells
  // "Key: value" alone: a two-column table's row, when the value is short (not a sentence
  // that happens to start "Note: ...").
  return cells[0]?.label && cells[0].value.length <= KEY_VALUE_MAX ? cells : null
}

function isWordAt(norm: string, at: number): boolean {
  return at >= 0 && at < norm.length && WORDISH.test(norm[at]!)
}

/** `needle` (normalised) in [from, to) of the page, as a whole word if it can be. */
function findIn(h: Normalised, needle: string, from: number, to: number): [number, number] | null {
  let loose: [number, number] | null = null
  for (let at = h.norm.indexOf(needle, from); at !== -1; at = h.norm.indexOf(needle, at + 1)) {
    if (at + needle.length > to) break
    const end = at + needle.length
    const bounded =
      !(WORDISH.test(needle[0]!) && isWordAt(h.norm, at - 1)) &&
      !(WORDISH.test(needle[needle.length - 1]!) && isWordAt(h.norm, end))
    if (bounded) return [at, end]
    loose ??= [at, end]
  }
  return loose
}

/** A value's normalised ranges in [from, to): whole, else at least half its words in order. */
function findValue(
  h: Normalised,
  value: string,
  from: number,
  to: number,
  byWords: boolean,
): [number, number][] {
  const whole = normalise(value).norm
  if (!whole) return []
  const hit = findIn(h, whole, from, to)
  if (hit) return [hit]
  const words = whole.split(' ').filter((w) => WORDISH.test(w))
  if (words.length < 2 || !byWords) return []
  const out: [number, number][] = []
  let cursor = from
  for (const word of words) {
    const at = findIn(h, word, cursor, out.length ? Math.min(to, cursor + WORD_GAP) : to)
    if (!at) continue
    out.push(at)
    cursor = at[1]
  }
  return out.length * 2 >= words.length ? out : []
}

/** The row's ranges (normalised) when its first value is at `start`, and how many cells. */
function rowAt(h: Normalised, cells: RowCell[], start: number): [[number, number][], number] {
  const ranges: [number, number][] = []
  const to = Math.min(h.norm.length, start + ROW_WINDOW)
  let cursor = start
  let found = 0
  for (const cell of cells) {
    // A lone "Key: value" must be found whole; a row's values may be found by their words.
    const byWords = cells.length > 1
    let hit = findValue(h, cell.value, cursor, to, byWords)
    if (!hit.length) hit = findValue(h, cell.value, start, to, byWords)
    if (!hit.length) continue
    found++
    const label = cell.label ? normalise(cell.label).norm : ''
    const lo = Math.max(0, hit[0]![0] - label.length - 2)
    const before = h.norm.slice(lo, hit[0]![0]).trimEnd()
    if (label && before.endsWith(label))
      ranges.push([lo + before.length - label.length, lo + before.length])
    ranges.push(...hit)
    cursor = Math.max(cursor, hit[hit.length - 1]![1])
  }
  return [ranges, found]
}

/**
 * Where a quoted table row's cells are on the page: [start, end) of each value (and of a key
 * printed beside it), or [] when not half of its cells, or not two, are found near its first.
 */
export function matchRow(hay: string, quote: string): [number, number][] {
  const cells = rowCells(quote)
  if (!cells) return []
  const h = normalise(hay)
  const first = normalise(cells[0]!.value).norm
  if (!first) return []
  let best: [number, number][] = []
  let bestFound = 0
  let tries = 0
  for (let at = h.norm.indexOf(first); at !== -1 && tries < MAX_STARTS; tries++) {
    const [ranges, found] = rowAt(h, cells, at)
    if (found > bestFound) [best, bestFound] = [ranges, found]
    if (found === cells.length) break
    at = h.norm.indexOf(first, at + 1)
  }
  if (bestFound * 2 < cells.length || bestFound < Math.min(2, cells.length)) return []
  return best.map(([a, b]) => [h.starts[a]!, h.ends[b - 1]!])
}

/** A quote's ranges on the page: the quote itself (matchQuote), or a table row's cells. */
export function matchQuoteRanges(hay: string, quote: string): [number, number][] {
  const at = matchQuote(hay, quote)
  return at ? [at] : matchRow(hay, quote)
}
