// Pure text helpers for the source viewer: find a passage in a page and cut the page into
// marked and unmarked runs. Rendering stays text-only ({{ }}), so page text can never inject HTML.

export interface Range {
  start: number
  end: number
  /** `heading`: a saved web page's heading line, shown as a heading, not as a highlight;
   * `note`: the reader's own highlight (docs/using/notes.md). */
  kind: 'passage' | 'quote' | 'hit' | 'heading' | 'note'
}

export interface Segment {
  text: string
  kinds: Range['kind'][]
}

/** Collapse whitespace runs to one space, remembering each kept character's original index. */
function normalise(text: string): { norm: string; map: number[] } {
  let norm = ''
  const map: number[] = []
  let space = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (/\s/.test(c)) {
      if (!space && norm.length) {
        norm += ' '
        map.push(i)
      }
      space = true
    } else {
      norm += c.toLowerCase()
      map.push(i)
      space = false
    }
  }
  return { norm, map }
}

/**
 * Where `needle` is in `text`: exactly, else ignoring case and whitespace differences.
 * Returns [start, end) in `text`, or null.
 */
export function locate(text: string, needle: string, from = 0): [number, number] | null {
  const trimmed = needle.trim()
  if (!trimmed) return null
  const exact = text.indexOf(trimmed, from)
  if (exact !== -1) return [exact, exact + trimmed.length]
  const hay = normalise(text)
  const pin = normalise(trimmed).norm.trim()
  let startNorm = 0
  while (startNorm < hay.map.length && hay.map[startNorm]! < from) startNorm++
  const at = hay.norm.indexOf(pin, startNorm)
  if (at === -1) return null
  return [hay.map[at]!, hay.map[at + pin.length - 1]! + 1]
}

/** Find a quote that may be shortened with "…" or "...": the whole of it, else its longest
 * piece that ``find`` finds. */
export function findQuote<T>(quote: string, find: (q: string) => T | null): T | null {
  const whole = find(quote)
  if (whole) return whole
  const pieces = quote
    .split(/…|\.\.\./)
    .map((p) => p.trim())
    .filter((p) => p.length >= 12)
    .sort((a, b) => b.length - a.length)
  for (const piece of pieces) {
    const hit = find(piece)
    if (hit) return hit
  }
  return null
}

/** A quote's [start, end) in the text (see findQuote for shortened quotes). */
export function locateQuote(text: string, quote: string, from = 0): [number, number] | null {
  return findQuote(quote, (q) => locate(text, q, from))
}

/** Cut `text` at every range boundary; each run lists the kinds of range covering it. */
export function segments(text: string, ranges: Range[]): Segment[] {
  const valid = ranges
    .map((r) => ({ ...r, start: Math.max(0, r.start), end: Math.min(text.length, r.end) }))
    .filter((r) => r.end > r.start)
  const cuts = new Set<number>([0, text.length])
  for (const r of valid) {
    cuts.add(r.start)
    cuts.add(r.end)
  }
  const points = [...cuts].sort((a, b) => a - b)
  const out: Segment[] = []
  for (let i = 0; i + 1 < points.length; i++) {
    const start = points[i]!
    const end = points[i + 1]!
    const kinds = valid.filter((r) => r.start <= start && r.end >= end).map((r) => r.kind)
    const prev = out[out.length - 1]
    if (prev && prev.kinds.join() === kinds.join()) prev.text += text.slice(start, end)
    else out.push({ text: text.slice(start, end), kinds })
  }
  return out
}

/** Parse "10-24,30-40" (the `hl` query parameter) into [start, end) pairs. */
export function parseSpans(value: unknown): [number, number][] {
  if (typeof value !== 'string' || !value) return []
  return value
    .split(',')
    .map((p) => p.split('-').map(Number))
    .filter(
      (p): p is [number, number] => p.length === 2 && p.every(Number.isFinite) && p[1]! > p[0]!,
    )
}

export function formatSpans(spans: [number, number][]): string {
  return spans.map(([a, b]) => `${a}-${b}`).join(',')
}
