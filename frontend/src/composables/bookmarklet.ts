// The "Save to Quire" bookmarklet (docs/using/browser-extension.md). It runs in the page being
// read, so it carries no API token: it opens this app's /save in a window of its own and hands
// it the page with postMessage, addressed to this app's origin only. /save (SaveView) posts it
// with the token it already holds. The key below is this browser's, not a secret of the
// library: a page that reads it can at most offer itself for saving without the confirmation.
export const SAVE_MESSAGE = 'quire-save'
export const READY_MESSAGE = 'quire-save:ready'

const KEY = 'quire.bookmarkletKey'

/** This browser's bookmarklet key, made on first use (the bookmarklet carries it). */
export function bookmarkletKey(): string {
  try {
    let key = localStorage.getItem(KEY)
    if (!key) {
      key = crypto.randomUUID()
      localStorage.setItem(KEY, key)
    }
    return key
  } catch {
    return ''
  }
}

/** The key the bookmarklet was made with, if this browser has one (never made here). */
export function knownBookmarkletKey(): string | null {
  try {
    return localStorage.getItem(KEY)
  } catch {
    return null
  }
}

/** The page half, run from the bookmark: open /save, wait for it, send it the page. */
function bookmarklet(app: string, key: string): void {
  const w = window.open(app + '/save', 'quire-save', 'popup,width=520,height=420')
  if (!w) {
    alert('Quire: the browser blocked the window that saves this page. Allow pop-ups here.')
    return
  }
  const page = {
    type: 'quire-save',
    key,
    url: location.href,
    title: document.title,
    html: document.documentElement.outerHTML,
  }
  const ready = (event: MessageEvent): void => {
    if (event.source !== w || event.origin !== app || event.data?.type !== 'quire-save:ready') {
      return
    }
    removeEventListener('message', ready)
    w.postMessage(page, app) // delivered only while the window shows this app
  }
  addEventListener('message', ready)
}

/**
 * The bookmark's address for this app at ``origin``: drag it to the bookmarks bar. Encoded,
 * since a javascript: address is percent-decoded before it runs (and loses its line breaks).
 */
export function bookmarkletHref(origin: string, key: string): string {
  const code = `(${bookmarklet.toString()})(${JSON.stringify(origin)},${JSON.stringify(key)})`
  return `javascript:${encodeURIComponent(`${code};void 0`)}`
}

/**
 * The page's HTML as it is sent on (the extension sends the same, extension/quire.js): declared
 * UTF-8 whatever charset it was served in, since it arrives here as text and leaves as UTF-8
 * JSON, and without its scripts (code, and often the session's data; JSON-LD, the page's
 * metadata, stays). Parsed inert: DOMParser runs no script and loads nothing.
 */
export function pageToSave(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html')
  for (const script of doc.querySelectorAll('script:not([type="application/ld+json"])')) {
    script.remove()
  }
  for (const meta of doc.querySelectorAll('meta[charset], meta[http-equiv]')) {
    const equiv = meta.getAttribute('http-equiv')?.toLowerCase()
    if (meta.hasAttribute('charset') || equiv === 'content-type') meta.remove()
  }
  doc.head.insertAdjacentHTML('afterbegin', '<meta charset="utf-8">')
  return '<!DOCTYPE html>\n' + doc.documentElement.outerHTML
}
