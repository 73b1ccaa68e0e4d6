// Language tags ("fr", "zh-Hant") as names in the reader's own language ("French").
let names: Intl.DisplayNames | null = null

/** The tag's name in the browser's language; `fallback` (or the tag) when it has none. */
export function languageName(tag: string, fallback?: string): string {
  names ??= new Intl.DisplayNames(undefined, { type: 'language', fallback: 'none' })
  try {
    return names.of(tag) ?? fallback ?? tag
  } catch {
    // Not a well-formed tag (RangeError): show what the server sent.
    return fallback ?? tag
  }
}
