import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { doc, errorJson, fetchRoutes, job, json } from '@/__tests__/fixtures'
import {
  READY_MESSAGE,
  SAVE_MESSAGE,
  bookmarkletHref,
  bookmarkletKey,
} from '@/composables/bookmarklet'
import SaveView from '../SaveView.vue'

const SITE = 'https://news.example.org'
const LATIN1_PAGE =
  '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252">' +
  '<title>Les députés</title><script>window.session = {csrf: "abc"}</script>' +
  '<script type="application/ld+json">{"author": "A. Dupont"}</script></head>' +
  '<body><p>Les députés ont adopté le texte.</p><script src="/app.js"></script></body></html>'

type Opener = { postMessage: ReturnType<typeof vi.fn> }

function setOpener(opener: Opener | null): void {
  Object.defineProperty(window, 'opener', { value: opener, configurable: true })
}

/** A message as the browser delivers it: from ``source``, sent by a page on ``origin``. */
function deliver(data: unknown, source: unknown, origin = SITE): void {
  const event = new MessageEvent('message', { data, origin })
  Object.defineProperty(event, 'source', { value: source })
  window.dispatchEvent(event)
}

function pageMessage(over: Record<string, unknown> = {}) {
  return {
    type: SAVE_MESSAGE,
    key: bookmarkletKey(),
    url: `${SITE}/2026/12/vote.html`,
    title: 'Les députés',
    html: LATIN1_PAGE,
    ...over,
  }
}

let posted: Record<string, unknown>[]

function serve(...answers: Response[]): void {
  posted = []
  vi.stubGlobal(
    'fetch',
    fetchRoutes({
      'POST /api/documents/url': async (request) => {
        posted.push(await request.json())
        const answer = answers.shift()
        if (!answer) throw new Error('one save too many')
        return answer
      },
    }),
  )
}

async function mountView() {
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/save', name: 'save', component: SaveView },
      { path: '/library/:id', name: 'document', component: { template: '<div />' } },
    ],
  })
  await router.push('/save')
  const w = mount(SaveView, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

const added = () => json({ status: 'added', document: doc(7), job: job() }, 202)

beforeEach(() => localStorage.clear())
afterEach(() => {
  vi.unstubAllGlobals()
  vi.useRealTimers()
  setOpener(null)
})

describe('SaveView', () => {
  it('saves the page its bookmarklet sent, declared UTF-8, and links to the document', async () => {
    const opener = { postMessage: vi.fn() }
    setOpener(opener)
    serve(added())
    const w = await mountView()
    expect(opener.postMessage).toHaveBeenCalledWith({ type: READY_MESSAGE }, '*')
    expect(w.text()).toContain('Waiting for the page')

    deliver(pageMessage(), opener)
    await flushPromises()

    expect(posted).toHaveLength(1)
    const body = posted[0]!
    expect(Object.keys(body).sort()).toEqual(['html', 'title', 'url', 'visibility'])
    expect(body.visibility).toBe('team')
    expect(body.url).toBe(`${SITE}/2026/12/vote.html`)
    expect(body.title).toBe('Les députés')
    const html = body.html as string
    expect(html.startsWith('<!DOCTYPE html>\n<html><head><meta charset="utf-8">')).toBe(true)
    expect(html).not.toContain('windows-1252')
    expect(html).toContain('<p>Les députés ont adopté le texte.</p>')
    expect(html).not.toContain('csrf')
    expect(html).not.toContain('app.js')
    expect(html).toContain('<script type="application/ld+json">{"author": "A. Dupont"}</script>')
    expect(w.get('[data-testid="outcome"]').text()).toBe('Saved')
    expect(w.get('[data-testid="page"]').text()).toContain(`${SITE}/2026/12/vote.html`)
    expect(w.get('a').attributes('href')).toBe('/library/7')
  })

  it('accepts only its opener, a page naming its own origin, and one page', async () => {
    const opener = { postMessage: vi.fn() }
    setOpener(opener)
    serve(added())
    const w = await mountView()

    deliver(pageMessage(), { postMessage: vi.fn() }) // another window
    deliver(pageMessage(), opener, 'https://evil.example.com') // not the page it names
    deliver({ ...pageMessage(), url: 42 }, opener)
    deliver({ type: 'something-else' }, opener)
    await flushPromises()
    expect(posted).toEqual([])
    expect(w.text()).toContain('Waiting for the page')

    deliver(pageMessage(), opener)
    deliver(pageMessage({ url: `${SITE}/other.html` }), opener)
    await flushPromises()
    expect(posted.map((b) => b.url)).toEqual([`${SITE}/2026/12/vote.html`])
  })

  it('asks before saving a page that came without this browser’s key', async () => {
    const opener = { postMessage: vi.fn() }
    setOpener(opener)
    serve(json({ status: 'unchanged', document: doc(7), job: null }))
    const w = await mountView()
    deliver(pageMessage({ key: 'guessed' }), opener)
    await flushPromises()
    expect(posted).toEqual([])
    await w.get('[data-testid="confirm"]').trigger('click')
    await flushPromises()
    expect(posted).toHaveLength(1)
    expect(w.get('[data-testid="outcome"]').text()).toBe('Already in the library')
  })

  it('shows the error envelope’s message and saves on a retry', async () => {
    const opener = { postMessage: vi.fn() }
    setOpener(opener)
    serve(
      errorJson(413, 'too_large', 'the page is 61 MB, over the limit of 50 MB'),
      json({ status: 'updated', document: doc(7), job: job() }, 202),
    )
    const w = await mountView()
    deliver(pageMessage(), opener)
    await flushPromises()
    expect(w.get('[data-testid="error"]').text()).toBe('the page is 61 MB, over the limit of 50 MB')
    await w.get('[data-testid="retry"]').trigger('click')
    await flushPromises()
    expect(posted).toHaveLength(2)
    expect(w.get('[data-testid="outcome"]').text()).toBe('Updated')
  })

  it('says why when opened without a bookmarklet, or when no page arrives', async () => {
    setOpener(null)
    let w = await mountView()
    expect(w.get('[data-testid="error"]').text()).toContain('Nothing to save')

    vi.useFakeTimers()
    setOpener({ postMessage: vi.fn() })
    w = await mountView()
    vi.advanceTimersByTime(10_001)
    await flushPromises()
    expect(w.get('[data-testid="error"]').text()).toContain('No page arrived from the bookmarklet')
  })
})

describe('the bookmarklet', () => {
  it('opens /save and hands the page only to the app’s origin, once it is ready', () => {
    const app = 'https://quire.example.org'
    const href = bookmarkletHref(app, 'k-123')
    expect(href.startsWith('javascript:')).toBe(true)
    expect(href).not.toMatch(/[\s"<>]/) // one line, safe in a bookmark

    const child = { postMessage: vi.fn() }
    const open = vi.fn(() => child)
    vi.stubGlobal('open', open)
    document.title = 'A page'
    new Function(decodeURIComponent(href.slice('javascript:'.length)))()
    expect(open).toHaveBeenCalledWith(`${app}/save`, 'quire-save', expect.any(String))

    deliver({ type: READY_MESSAGE }, child, 'https://evil.example.com') // not the app
    deliver({ type: READY_MESSAGE }, { postMessage: vi.fn() }, app) // not its window
    expect(child.postMessage).not.toHaveBeenCalled()

    deliver({ type: READY_MESSAGE }, child, app)
    expect(child.postMessage).toHaveBeenCalledTimes(1)
    const [page, target] = child.postMessage.mock.calls[0]!
    expect(target).toBe(app)
    expect(page).toMatchObject({ type: SAVE_MESSAGE, key: 'k-123', url: location.href })
    expect(page.title).toBe('A page')
    expect(page.html).toContain('<title>A page</title>')
    expect(Object.keys(page).sort()).toEqual(['html', 'key', 'title', 'type', 'url'])

    deliver({ type: READY_MESSAGE }, child, app) // handed over once
    expect(child.postMessage).toHaveBeenCalledTimes(1)
  })
})
