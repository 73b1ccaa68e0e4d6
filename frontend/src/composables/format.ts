export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KB', 'MB', 'GB']
  let v = n / 1024
  let u = 0
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`
}

export function formatDate(iso: string): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

export function percent(f: number): string {
  return `${Math.round(Math.max(0, Math.min(1, f)) * 100)}%`
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`
}

/** A duration to the precision a reader needs: "4.2 s", "40 s", "1 min 35 s", "2 h 5 min". */
export function formatSeconds(s: number): string {
  if (s < 10) return formatMs(s * 1000)
  if (s < 60) return `${Math.round(s)} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`
  return `${Math.floor(m / 60)} h ${m % 60} min`
}

/** Kinds whose pages are pages of the original: a PDF's, the frames of a scan (image). */
export const PAGE_KINDS: readonly string[] = ['pdf', 'image']

/** Kinds whose pages are the turns of a conversation (Perplexity, ChatGPT, Claude). */
export const TURN_KINDS: readonly string[] = ['perplexity', 'chatgpt', 'claude']

/** A document whose chunks are in while the rest is done: "searchable by keywords ·
 * embedding 40%" (the share of its chunks embedded), or "… · OCR 40%" while a PDF's scanned
 * pages are read after its text layer went in. */
export function searchableLabel(stage: string, fraction: number | null | undefined): string {
  const doing = stage === 'embed' ? 'embedding' : stage === 'ocr' ? 'OCR' : stage
  return `searchable by keywords · ${doing} ${percent(fraction ?? 0)}`
}
