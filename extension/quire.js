// What the popup and the settings page share: the settings, the one origin the extension may
// reach, reading a tab when the user clicked, and the two calls to the Quire server
// (docs/using/browser-extension.md). Nothing here runs unless a page of the extension calls it.
//
//   const settings = await loadSettings()
//   const page = await readTab(tab.id)        // only after the user's click (activeTab)
//   const saved = await savePage(settings, page)
//   OUTCOMES[saved.status]                     // "Saved", "Updated", "Already in the library"

export const ext = globalThis.browser ?? globalThis.chrome

/** How long a call to the server may take: a big page is stored, not yet read, when it answers. */
const TIMEOUT_MS = 60_000

/** What the popup shows for each status of POST /api/documents/url. */
export const OUTCOMES = {
  added: 'Saved',
  updated: 'Updated',
  unchanged: 'Already in the library',
}

/** The server address and token, as the settings page stored them ('' when never set). */
export async function loadSettings() {
  const { server = '', token = '' } = await ext.storage.local.get(['server', 'token'])
  return { server, token }
}

/** The server address as typed, checked and without a trailing slash: "https://host[:port][/path]". */
export function normaliseServer(text) {
  let url
  try {
    url = new URL(text.trim())
  } catch {
    throw new Error(`"${text.trim()}" is not an address: type it as https://quire.example.org`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`the server's address must start with https:// or http://, not ${url.protocol}`)
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new Error(
      'the server address takes no user name, password, "?" or "#": put the token below',
    )
  }
  return (url.origin + url.pathname).replace(/\/+$/, '')
}

/**
 * The host permission that lets the extension reach the server and nothing else. Chromium
 * takes a port in a match pattern; Firefox does not (its pattern covers every port of the host).
 */
export function originPattern(server) {
  const url = new URL(server)
  const firefox = typeof ext.runtime.getBrowserInfo === 'function'
  const host = firefox ? url.hostname : url.host
  return `${url.protocol}//${host}/*`
}

/** Whether the browser lets the extension reach the server (granted on the settings page). */
export function hasAccess(server) {
  return ext.permissions.contains({ origins: [originPattern(server)] })
}

/** True when http:// would carry the token in clear text beyond this machine. */
export function isCleartext(server) {
  const { protocol, hostname } = new URL(server)
  const loopback = hostname === 'localhost' || hostname === '[::1]' || hostname.startsWith('127.')
  return protocol === 'http:' && !loopback
}

/** The page's address without its "#fragment": a part of the same page is the same document. */
export function pageAddress(href) {
  const url = new URL(href)
  // "#!/…" and "#/…" are a single-page app's routes: another page, kept.
  if (!url.hash.startsWith('#!') && !url.hash.startsWith('#/')) url.hash = ''
  return url.href
}

/**
 * The tab's address, title and rendered HTML. Runs in the page only because the user clicked
 * the button (activeTab); the page's own scripts never see the extension or the token.
 */
export async function readTab(tabId) {
  let results
  try {
    results = await ext.scripting.executeScript({ target: { tabId }, func: renderedPage })
  } catch (err) {
    throw new Error(
      `the browser does not let extensions read this page (its own pages, the add-on store, ` +
        `local files): ${err.message}`,
    )
  }
  const page = results?.[0]?.result
  if (!page) throw new Error('the page could not be read: reload it and try again')
  return { ...page, url: pageAddress(page.url) }
}

/**
 * Injected into the page (so it may use nothing from this module): the page as it is rendered
 * now, declared UTF-8 since that is what the JSON body carries, whatever charset it came in, and
 * without its scripts (code, and often the session's data; JSON-LD, which is the page's
 * metadata, stays). Other documents (a PDF in the viewer, an image) are sent by address only:
 * Quire fetches them.
 */
function renderedPage() {
  const isHtml = ['text/html', 'application/xhtml+xml'].includes(document.contentType)
  let html = null
  if (isHtml && document.documentElement) {
    const root = document.documentElement.cloneNode(true)
    for (const script of root.querySelectorAll('script:not([type="application/ld+json"])')) {
      script.remove()
    }
    for (const meta of root.querySelectorAll('meta[charset], meta[http-equiv]')) {
      if (meta.hasAttribute('charset') || meta.httpEquiv.toLowerCase() === 'content-type') {
        meta.remove()
      }
    }
    const head = root.querySelector('head')
    if (head) head.insertAdjacentHTML('afterbegin', '<meta charset="utf-8">')
    html = '<!DOCTYPE html>\n' + root.outerHTML
  }
  return { url: location.href, title: document.title, html }
}

/** POST /api/documents/url: {status, document, job}, or an Error with the server's message. */
export async function savePage(settings, page) {
  const body = { url: page.url, title: page.title || undefined }
  if (page.html !== null) body.html = page.html
  return call(settings, '/api/documents/url', { method: 'POST', body: JSON.stringify(body) })
}

/**
 * "Test connection": GET /api/health says whether a Quire answers (health asks no token), then
 * an empty POST /api/documents/url says whether it takes the token: refused with 401 when not,
 * with a validation error (and nothing stored) when it does.
 */
export async function checkConnection(settings) {
  const health = await call(settings, '/api/health', { method: 'GET' })
  if (typeof health?.version !== 'string') {
    throw new Error(`${settings.server} answered, but not as a Quire server does`)
  }
  try {
    await call(settings, '/api/documents/url', { method: 'POST', body: '{}' })
  } catch (err) {
    if (err.status === 400 || err.status === 422) {
      return `Connected to Quire ${health.version}; the token is accepted.`
    }
    if (err.status === 404 || err.status === 405) {
      throw new Error(
        `Quire ${health.version} answers but cannot save pages yet (no /api/documents/url): ` +
          'update the server',
      )
    }
    throw err
  }
  throw new Error('the server accepted an empty page: it is not answering as Quire does')
}

/** One request to the configured server; every failure becomes an Error with a message to show. */
async function call(settings, path, init) {
  const headers = { Accept: 'application/json' }
  if (init.body) headers['Content-Type'] = 'application/json'
  if (settings.token) headers.Authorization = `Bearer ${settings.token}`
  let resp
  try {
    resp = await fetch(settings.server + path, {
      ...init,
      headers,
      // The extension's own request: no cookies of the server's site, no cache, and never
      // re-sent somewhere else by a redirect.
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    })
  } catch (err) {
    const why = err.name === 'TimeoutError' ? `no answer in ${TIMEOUT_MS / 1000} s` : err.message
    throw new Error(`${settings.server} could not be reached (${why})`)
  }
  if (resp.type === 'opaqueredirect') {
    throw new Error(
      `${settings.server} answered with a redirect: set its final address (e.g. https://) in ` +
        'the settings',
    )
  }
  const text = await resp.text()
  let body = null
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON (a proxy's page): the status says it
  }
  if (resp.ok) return body
  const message = body?.error?.message ?? `HTTP ${resp.status} from ${settings.server}`
  const err = new Error(
    resp.status === 401 ? `${message} (check the token in the settings)` : message,
  )
  err.status = resp.status
  throw err
}
