import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'

import ChatExport from '../ChatExport.vue'

const BODIES: Record<string, { text: string; type: string; file: string }> = {
  markdown: { text: 'Answer [1]\n\n## References\n\n- [1] …\n', type: 'text/markdown', file: 'md' },
  bibtex: { text: '@book{carroll1865alice,\n}\n', type: 'application/x-bibtex', file: 'bib' },
  csl: { text: '[]\n', type: 'application/vnd.citationstyles.csl+json', file: 'json' },
}

function serve(): ReturnType<typeof vi.fn<(req: Request) => Promise<Response>>> {
  const fetch = vi.fn<(req: Request) => Promise<Response>>(async (req) => {
    const format = new URL(req.url).searchParams.get('format')!
    const body = BODIES[format]!
    return new Response(body.text, {
      headers: {
        'content-type': body.type,
        'content-disposition': `attachment; filename="quire-answer-7.${body.file}"`,
      },
    })
  })
  vi.stubGlobal('fetch', fetch)
  return fetch
}

afterEach(() => {
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})

describe('ChatExport', () => {
  it('copies the answer as Markdown with its references', async () => {
    const fetch = serve()
    const writeText = vi.fn(async () => {})
    vi.stubGlobal('navigator', { clipboard: { writeText } })
    const w = mount(ChatExport, { props: { messageId: 7 } })
    await w.get('button:nth-of-type(1)').trigger('click')
    await flushPromises()
    expect(fetch.mock.calls[0]![0].url).toMatch(/\/api\/messages\/7\/export\?format=markdown$/)
    expect(writeText).toHaveBeenCalledWith(BODIES.markdown!.text)
    expect(w.get('[role="status"]').text()).toContain('Copied as Markdown')
  })

  it.each([
    ['Download BibTeX', 'bibtex', 'quire-answer-7.bib'],
    ['CSL JSON', 'csl', 'quire-answer-7.json'],
  ])('%s saves the file the server names', async (label, format, filename) => {
    serve()
    const blobs: Blob[] = []
    vi.spyOn(URL, 'createObjectURL').mockImplementation((b) => {
      blobs.push(b as Blob)
      return 'blob:export'
    })
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {})
    const clicked: HTMLAnchorElement[] = []
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
      this: HTMLAnchorElement,
    ) {
      clicked.push(this)
    })
    const w = mount(ChatExport, { props: { messageId: 7 } })
    const button = w.findAll('button').find((b) => b.text() === label)!
    await button.trigger('click')
    await flushPromises()
    expect(clicked).toHaveLength(1)
    expect(clicked[0]!.download).toBe(filename)
    expect(clicked[0]!.href).toBe('blob:export')
    expect(blobs[0]!.type).toBe(BODIES[format]!.type)
    expect(await blobs[0]!.text()).toBe(BODIES[format]!.text)
  })

  it('says why an export failed', async () => {
    vi.stubGlobal('fetch', async () =>
      Response.json(
        { error: { status: 400, code: 'bad_input', message: 'only answers', detail: null } },
        { status: 400 },
      ),
    )
    const w = mount(ChatExport, { props: { messageId: 7 } })
    await w.findAll('button')[1]!.trigger('click')
    await flushPromises()
    expect(w.get('[role="status"]').text()).toBe('Export failed: only answers')
  })
})
