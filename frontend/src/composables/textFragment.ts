// A link to a saved web page's live original that scrolls to and highlights a passage: WICG
// Text Fragments, `#:~:text=textStart[,textEnd]`. The same rule as the API's source links
// (backend/quire/urls.py text_fragment): up to ten words the whole passage, else its first and
// last five; written without spaces, the first and last twelve characters of a long passage;
// each term percent-encoded, "-", "," and "&" included.

const WHOLE_WORDS = 10
const EDGE_WORDS = 5
const WHOLE_CHARS = 40
const EDGE_CHARS = 12

function encodeTerm(term: string): string {
  return encodeURIComponent(term)
    .replace(/-/g, '%2D')
    .replace(/[!'()*]/g, (c) => {
      return `%${c.charCodeAt(0).toString(16).toUpperCase()}`
    })
}

/** `url` with a text fragment at `passage` (the page's own anchor replaced). */
export function textFragment(url: string, passage: string): string {
  const words = passage.split(/\s+/).filter(Boolean)
  if (!words.length) return url
  let terms: string[]
  if (words.length === 1 && [...words[0]!].length > WHOLE_CHARS) {
    const chars = [...words[0]!]
    terms = [chars.slice(0, EDGE_CHARS).join(''), chars.slice(-EDGE_CHARS).join('')]
  } else if (words.length > WHOLE_WORDS) {
    terms = [words.slice(0, EDGE_WORDS).join(' '), words.slice(-EDGE_WORDS).join(' ')]
  } else {
    terms = [words.join(' ')]
  }
  return `${url.split('#')[0]}#:~:text=${terms.map(encodeTerm).join(',')}`
}
