import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { doc, errorJson, fetchRoutes, job, json, sse, streamResponse } from '@/__tests__/fixtures'
import type { Me } from '@/api/me'
import UploadDropZone from '@/components/UploadDropZone.vue'
import UploadView from '../UploadView.vue'

/** Each upload's request keeps what it sent; the server answers that the file is already in
 * the library (no job to follow), so the queue moves on. */
class FakeXHR {
  static sent: FormData[] = []
  upload = {}
  status = 0
  responseText = ''
  onload: (() => void) | null = null
  open() {}
  setRequestHeader() {}
  send(body: FormData) {
    FakeXHR.sent.push(body)
    const name = (body.get('files') as File).name
    // A name starting with "bad" is refused, as an unsupported file is.
    const files = name.startsWith('bad')
      ? [
          {
            filename: name,
            status: 'rejected',
            error: { message: `${name}: unsupported file type` },
          },
        ]
      : [{ filename: name, status: 'duplicate', document_id: 1, job_id: null }]
    setTimeout(() => {
      this.status = 200
      this.responseText = JSON.stringify({ files })
      this.onload?.()
    })
  }
  abort() {}
}

beforeEach(() => {
  setActivePinia(createPinia())
  FakeXHR.sent = []
  vi.stubGlobal('XMLHttpRequest', FakeXHR)
})
afterEach(() => vi.unstubAllGlobals())

const ALICE: Me = { mode: 'people', user: { id: 1, name: 'alice', admin: false } }

async function mountView(me: Me, routes: Parameters<typeof fetchRoutes>[0] = {}) {
  vi.stubGlobal('fetch', fetchRoutes({ 'GET /api/me': () => json(me), ...routes }))
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/documents/:id', name: 'document', component: { template: '<div />' } },
      { path: '/:any(.*)*', component: { template: '<div />' } },
    ],
  })
  const w = mount(UploadView, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

/** Drop files on the zone, as a user would, and return the form fields each request sent. */
async function drop(w: Awaited<ReturnType<typeof mountView>>, ...names: string[]) {
  const before = FakeXHR.sent.length
  w.getComponent(UploadDropZone).vm.$emit(
    'files',
    names.map((n) => new File(['x'], n)),
  )
  await flushPromises()
  return FakeXHR.sent.slice(before).map((f) => f.get('visibility'))
}

describe('UploadView privacy', () => {
  it('offers "Private to me", unchecked, with its hint, in a team library', async () => {
    const w = await mountView(ALICE)
    const box = w.get<HTMLInputElement>('[data-testid="upload-private"]')
    expect(box.element.checked).toBe(false)
    expect(box.element.closest('label')!.textContent!.trim()).toBe('Private to me')
    const hint = w.get(`#${box.attributes('aria-describedby')}`)
    expect(hint.text()).toBe('Only you will see these documents; unchecked, the whole team does.')
  })

  it('sends visibility=private only for the files added while it is checked', async () => {
    const w = await mountView(ALICE)
    expect(await drop(w, 'team.pdf')).toEqual([null])
    await w.get('[data-testid="upload-private"]').setValue(true)
    expect(await drop(w, 'mine.pdf', 'mine2.pdf')).toEqual(['private', 'private'])
    await w.get('[data-testid="upload-private"]').setValue(false)
    expect(await drop(w, 'team2.pdf')).toEqual([null])
    // The rows say which files went private.
    const rows = w.findAll('[data-testid="upload-row"]')
    expect(rows.map((r) => r.find('[data-testid="private-badge"]').exists())).toEqual([
      false,
      true,
      true,
      false,
    ])
  })

  it('offers no choice in the one-person Quire and sends no visibility', async () => {
    const w = await mountView({ mode: 'single', user: null })
    expect(w.find('[data-testid="upload-private"]').exists()).toBe(false)
    expect(w.text()).not.toContain('Private to me')
    expect(await drop(w, 'a.pdf')).toEqual([null])
  })
})

describe('UploadView summary', () => {
  it('says so when every file failed, and offers no question to ask', async () => {
    const w = await mountView({ mode: 'single', user: null })
    await drop(w, 'bad-1.exe', 'bad-2.exe', 'bad-3.exe')
    // Two at a time: the third is sent once one of the first two is answered.
    const summary = await vi.waitFor(() => w.get('[data-testid="upload-summary"]'))
    expect(summary.text()).toBe('None of the 3 files could be added: the reason is under each.')
    expect(summary.find('a').exists()).toBe(false)
    expect(w.findAll('[data-testid="upload-error"]')).toHaveLength(3)
  })

  it('counts what went in, what was there already and what failed', async () => {
    const w = await mountView({ mode: 'single', user: null })
    await drop(w, 'notes.pdf', 'bad.exe')
    const summary = await vi.waitFor(() => w.get('[data-testid="upload-summary"]'))
    expect(summary.text()).toContain(
      'Done: 1 file already in the library, 1 file failed (see above).',
    )
    expect(summary.find('a[href="/chat"]').exists()).toBe(true)
  })
})

describe('UploadView links', () => {
  /** The server's answers by address, and the bodies it was sent. */
  function linkRoutes(sent: unknown[]) {
    return {
      'POST /api/documents/url': async (request: Request) => {
        const body = (await request.json()) as { url: string; visibility: string }
        sent.push(body)
        if (body.url.includes('intranet'))
          return errorJson(
            403,
            'fetch_refused',
            'intranet.local resolves to 10.0.0.5, which is a private address',
          )
        if (body.url.includes('known'))
          return json({ status: 'unchanged', document: doc(7), job: null })
        return json(
          { status: 'added', document: doc(8), job: job({ id: 5, status: 'queued' }) },
          202,
        )
      },
      'GET /api/jobs/5/events': () =>
        streamResponse([
          sse([['done', job({ id: 5, document_id: 8, status: 'done', progress: 1 })]]),
        ]),
    }
  }

  it('sends each pasted address to the server and shows what became of it', async () => {
    const sent: unknown[] = []
    const w = await mountView(ALICE, linkRoutes(sent))
    await w
      .get('[data-testid="link-input"]')
      .setValue('https://example.org/paper.pdf\n https://example.org/known http://intranet.local/')
    await w.get('[data-testid="link-form"]').trigger('submit')
    await flushPromises()
    expect(sent).toEqual([
      { url: 'https://example.org/paper.pdf', visibility: 'team' },
      { url: 'https://example.org/known', visibility: 'team' },
      { url: 'http://intranet.local/', visibility: 'team' },
    ])
    const rows = w.findAll('[data-testid="upload-row"]')
    expect(rows.map((r) => r.attributes('data-phase'))).toEqual(['ready', 'duplicate', 'failed'])
    expect(rows[1]!.text()).toContain('Unchanged: already in the library')
    expect(rows[2]!.get('[data-testid="upload-error"]').text()).toBe(
      'intranet.local resolves to 10.0.0.5, which is a private address',
    )
    expect(rows[0]!.get('a').attributes('href')).toBe('/documents/8')
    expect((w.get('[data-testid="link-input"]').element as HTMLInputElement).value).toBe('')
  })

  it('refuses what is not an http(s) address, and sends nothing', async () => {
    const sent: unknown[] = []
    const w = await mountView(ALICE, linkRoutes(sent))
    await w.get('[data-testid="link-input"]').setValue('file:///etc/passwd example.org')
    await w.get('[data-testid="link-form"]').trigger('submit')
    await flushPromises()
    expect(w.get('[data-testid="link-error"]').text()).toBe(
      'Not an http(s) address: file:///etc/passwd, example.org',
    )
    await w.get('[data-testid="link-input"]').setValue('  ')
    await w.get('[data-testid="link-form"]').trigger('submit')
    expect(w.get('[data-testid="link-error"]').text()).toContain('Paste the address of a page')
    expect(sent).toEqual([])
    expect(w.findAll('[data-testid="upload-row"]')).toHaveLength(0)
  })

  it('adds a link as private while "Private to me" is checked', async () => {
    const sent: unknown[] = []
    const w = await mountView(ALICE, linkRoutes(sent))
    await w.get('[data-testid="upload-private"]').setValue(true)
    await w.get('[data-testid="link-input"]').setValue('https://example.org/known')
    await w.get('[data-testid="link-form"]').trigger('submit')
    await flushPromises()
    expect(sent).toEqual([{ url: 'https://example.org/known', visibility: 'private' }])
    expect(w.get('[data-testid="private-badge"]').text()).toBe('private')
  })
})
