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

/** The indices of the OCR words that hold the quote (empty when it is not found); with `near`
 * (where the quote is in the page's stored text, as a fraction of its length: a highlight's
 * span), the occurrence nearest that place when the quote is on the page more than once. */
export function matchWords(words: OcrWord[], quote: string, near: number | null = null): number[] {
  if (!quote.trim()) return []
  const { text, starts } = joinWords(words)
  let at = matchQuote(text, quote)
  if (at && near !== null) {
    const off = (a: [number, number]) => Math.abs(a[0] / Math.max(1, text.length) - near)
    let next = matchQuote(text, quote, at[0] + 1)
    for (let i = 0; next && i < MAX_OCCURRENCES; i++) {
      if (off(next) < off(at)) at = next
      next = matchQuote(text, quote, next[0] + 1)
    }
  }
  return at ? spansOf(starts, text.length, at).map((p) => p.index) : []
}

/** Occurrences of a highlight's quote weighed against its span, at most. */
const MAX_OCCURRENCES = 50

/** A box over a page (an OCR word of a passage, or a highlight's stored rectangle), in % of
 * the page (so it scales with the page); a highlight's in its note's colour. */
export interface OcrBox {
  kind: 'passage' | 'quote' | 'note'
  left: string
  top: string
  width: string
  height: string
  color?: string | null
}

/** A note's colour as a highlight is drawn in it: translucent, over the page (a hex colour may
 * come without its #, as Zotero's). */
export function noteTint(color: string): string {
  const c = /^[0-9a-f]{3,8}$/i.test(color) ? `#${color}` : color
  return `color-mix(in srgb, ${c} 45%, transparent)`
}

/** What to draw over the OCR words: a passage's text; a highlight's colour and `near` (its
 * span's place in the page's text, 0..1). */
export interface OcrPassage {
  text: string
  kind: OcrBox['kind']
  color?: string | null
  near?: number | null
}

const pct = (v: number, of: number) => `${((100 * v) / of).toFixed(3)}%`

/** Boxes over the OCR words that hold each passage. */
export function ocrBoxes(ocr: OcrWords, passages: OcrPassage[]): OcrBox[] {
  const out: OcrBox[] = []
  for (const p of passages) {
    for (const k of matchWords(ocr.words, p.text, p.near ?? null)) {
      const [x0, y0, x1, y1] = ocr.words[k]!
      out.push({
        kind: p.kind,
        color: p.color ?? null,
        left: pct(x0, ocr.width),
        top: pct(y0, ocr.height),
        width: pct(x1 - x0, ocr.width),
        height: pct(y1 - y0, ocr.height),
      })
    }
  }
  return out
}

/** Where to draw a passage on a page without its words on a text layer: over its OCR words;
 * a highlight not found there, where its stored rectangles say (`storedBoxes`). */
export function passageBoxes(
  p: OcrPassage & { boxes?: readonly Record<string, unknown>[] | null },
  ocr: OcrWords | null,
  fromPdf?: PdfFrame,
): OcrBox[] {
  const over = ocr ? ocrBoxes(ocr, [p]) : []
  return over.length || p.kind !== 'note' ? over : storedBoxes(p.boxes, p, fromPdf)
}

/** A rendered PDF page: PDF points to its pixels (pdf.js's viewport), and its size. */
export interface PdfFrame {
  rect: (r: number[]) => number[]
  width: number
  height: number
}

/** A highlight's stored rectangle: fractions of the page (Quire's), or Zotero's in PDF points
 * from the bottom-left corner (`{"pdf": [x1, y1, x2, y2]}`). */
export type StoredBox = { x: number; y: number; w: number; h: number } | { pdf: number[] }

/**
 * A highlight's stored rectangles as boxes over the page. Zotero's are turned into the page's
 * own coordinates by `fromPdf` (pdf.js's viewport: it knows the crop box and rotation) and
 * divided by `size`; without them (an image file's page) they are left out.
 */
export function storedBoxes(
  boxes: readonly Record<string, unknown>[] | null | undefined,
  p: Pick<OcrPassage, 'kind' | 'color'>,
  fromPdf?: PdfFrame,
): OcrBox[] {
  const out: OcrBox[] = []
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null)
  for (const b of boxes ?? []) {
    let frame: [number, number, number, number] | null = null // x, y, w, h in 0..1
    const pdf = Array.isArray(b.pdf) ? b.pdf.map(num) : null
    if (pdf && pdf.length >= 4 && pdf.every((v) => v !== null) && fromPdf) {
      const [a, c, e, f] = fromPdf.rect(pdf.slice(0, 4) as number[]) as [
        number,
        number,
        number,
        number,
      ]
      const [W, H] = [fromPdf.width, fromPdf.height]
      frame = [Math.min(a, e) / W, Math.min(c, f) / H, Math.abs(e - a) / W, Math.abs(f - c) / H]
    } else {
      const [x, y, w, h] = [num(b.x), num(b.y), num(b.w), num(b.h)]
      if (x !== null && y !== null && w !== null && h !== null) frame = [x, y, w, h]
    }
    if (!frame || frame.some((v) => v < -0.01 || v > 1.01) || !(frame[2] > 0 && frame[3] > 0)) {
      continue
    }
    out.push({
      kind: p.kind,
      color: p.color ?? null,
      left: pct(frame[0], 1),
      top: pct(frame[1], 1),
      width: pct(frame[2], 1),
      height: pct(frame[3], 1),
    })
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
