import { describe, expect, it } from 'vitest'

import { source } from '@/__tests__/fixtures'
import { renderAnswer } from '../useMarkdown'

function dom(html: string): HTMLElement {
  const div = document.createElement('div')
  div.innerHTML = html
  return div
}

describe('citations', () => {
  const sources = [source(1), source(2)]

  it('links [n] to the cited page in the source viewer', () => {
    const el = dom(renderAnswer('Tides rise twice a day [1].', sources))
    const a = el.querySelector('a.cite')!
    expect(a.textContent).toBe('[1]')
    expect(a.getAttribute('data-n')).toBe('1')
    const href = new URL(a.getAttribute('href')!, 'http://x')
    expect(href.pathname).toBe('/library/3/pages/11')
    expect(href.searchParams.get('chunk')).toBe('101')
    expect(href.searchParams.get('hl')).toBe('16-22')
    expect(href.searchParams.get('quote')).toBe('Passage 1 about whales')
  })

  it("names the cited place in the link's title as the API names it", () => {
    const epub = source(1, { kind: 'epub', page: 62, place: 'Chapter 60 · The Return' })
    const el = dom(renderAnswer('He came back [1].', [epub]))
    expect(el.querySelector('a.cite')!.getAttribute('title')).toBe(
      'Moby-Dick, Chapter 60 · The Return',
    )
  })

  it('links each number of [1, 2] and leaves unknown numbers as text', () => {
    const el = dom(renderAnswer('Both [1, 2]. Invented [7].', sources))
    expect([...el.querySelectorAll('a.cite')].map((a) => a.getAttribute('data-n'))).toEqual([
      '1',
      '2',
    ])
    expect(el.textContent).toContain('[7]')
  })

  it('flags a sentence the citation check left without a source', () => {
    const el = dom(renderAnswer('Signed in 1999 [unsupported]. Tides [1].', sources))
    const flag = el.querySelector('span.unsupported')!
    expect(flag.textContent).toBe('[unsupported]')
    expect(flag.getAttribute('title')).toMatch(/citations were removed/)
    expect(el.querySelectorAll('a.cite')).toHaveLength(1)
    expect(el.textContent!.trim()).toBe('Signed in 1999 [unsupported]. Tides [1].')
  })

  it("leaves a quote's own escaped brackets as text", () => {
    const el = dom(
      renderAnswer('- “Halt, returning µm[µs\\[0] … µs\\[1]]; see \\[2].” [1]', sources),
    )
    expect([...el.querySelectorAll('a.cite')].map((a) => a.getAttribute('data-n'))).toEqual(['1'])
    expect(el.textContent!.trim()).toBe('“Halt, returning µm[µs[0] … µs[1]]; see [2].” [1]')
  })

  it('does not touch real links or code', () => {
    const el = dom(renderAnswer('See [1](https://example.org) and `arr[1]`.', sources))
    expect(el.querySelectorAll('a.cite')).toHaveLength(0)
    expect(el.querySelector('a')!.getAttribute('href')).toBe('https://example.org')
    expect(el.querySelector('code')!.textContent).toBe('arr[1]')
  })

  it('renders markdown', () => {
    const el = dom(renderAnswer('**Bold** claim [2]\n\n- one\n- two', sources))
    expect(el.querySelector('strong')!.textContent).toBe('Bold')
    expect(el.querySelectorAll('li')).toHaveLength(2)
  })
})

describe('sanitising', () => {
  const payloads = [
    '<script>window.__pwned = 1</script>',
    '<img src=x onerror="window.__pwned = 2">',
    '<a href="javascript:window.__pwned=3">click</a>',
    '[click](javascript:window.__pwned=4)',
    '<svg onload="window.__pwned=5"></svg>',
    '<iframe src="javascript:alert(1)"></iframe>',
  ]

  it.each(payloads)('never produces executable markup: %s', (payload) => {
    const html = renderAnswer(`Answer ${payload} [1]`, [
      source(1, { title: '<img src=x onerror=alert(1)>' }),
    ])
    const el = dom(html)
    expect(el.querySelector('script, iframe, svg, img[onerror]')).toBeNull()
    for (const node of el.querySelectorAll('*')) {
      for (const attr of node.attributes) {
        expect(attr.name.startsWith('on')).toBe(false)
        expect(attr.value.toLowerCase()).not.toContain('javascript:')
      }
    }
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined()
  })

  it('shows raw HTML from a document as text', () => {
    const el = dom(renderAnswer('> <img src=x onerror=alert(1)> said the page [1]', [source(1)]))
    expect(el.textContent).toContain('<img src=x onerror=alert(1)>')
  })
})
