import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { source } from '@/__tests__/fixtures'
import ChatSources from '../ChatSources.vue'

const router = createRouter({
  history: createMemoryHistory(),
  routes: [
    { path: '/library/:id/pages/:page', name: 'source', component: { template: '<div />' } },
  ],
})

describe('ChatSources', () => {
  it('lists title, page, preview with matches, and links', () => {
    const w = mount(ChatSources, {
      props: {
        sources: [
          source(1),
          source(2, {
            kind: 'perplexity',
            title: 'PNW states',
            page: 2,
            place: 'turn 2',
            url: 'https://www.perplexity.ai/search/pnw-abc',
          }),
        ],
        cited: [1],
      },
      global: { plugins: [router] },
    })
    const items = w.findAll('[data-testid="source"]')
    expect(items).toHaveLength(2)
    expect(items[0]!.classes()).toContain('cited')
    expect(items[0]!.text()).toContain('Moby-Dick')
    expect(items[0]!.text()).toContain('p. 11')
    expect(items[0]!.get('mark.hit').text()).toBe('whales')
    expect(items[0]!.get('a.title').attributes('href')).toMatch(
      /^\/library\/3\/pages\/11\?chunk=101/,
    )
    expect(items[0]!.find('a[href="/api/documents/3/file#page=11"]').exists()).toBe(true)
    expect(items[1]!.text()).toContain('turn 2')
    expect(items[1]!.get('a[href^="https://www.perplexity.ai"]').text()).toContain('thread')
  })

  it('shows the place as the API names it, with the section it does not name', () => {
    const w = mount(ChatSources, {
      props: {
        sources: [
          source(1, { page: 188, page_label: '166', place: 'p. 166 (PDF p. 188)' }),
          source(2, {
            kind: 'epub',
            page: 62,
            heading_path: 'Chapter 60 > The Return',
            place: 'Chapter 60 · The Return',
            section: '',
          }),
        ],
        cited: [],
      },
      global: { plugins: [router] },
    })
    const [pdf, epub] = w.findAll('.where')
    expect(pdf!.get('[data-testid="place"]').text()).toBe('p. 166 (PDF p. 188)')
    expect(pdf!.text().replace(/\s+/g, ' ')).toContain('p. 166 (PDF p. 188) · Chapter 1')
    // An EPUB is its chapter, once: no "§", no "section 62", no heading path repeated.
    expect(epub!.get('[data-testid="place"]').text()).toBe('Chapter 60 · The Return')
    expect(epub!.text()).not.toMatch(/§|section|>/)
  })

  it("lists a Perplexity passage's web sources beside the thread link", () => {
    const w = mount(ChatSources, {
      props: {
        sources: [
          source(1, {
            kind: 'perplexity',
            page: 3,
            heading_path: 'figs and Newton > Similarity',
            place: 'turn 3',
            section: 'figs and Newton > Similarity',
            url: 'https://www.perplexity.ai/search/pnw-abc',
            web_sources: [
              { n: 2, url: 'https://en.wikipedia.org/wiki/Isaac_Newton', title: null },
              { n: 5, url: 'https://example.org/figs', title: 'All about figs' },
              { n: 7, url: 'javascript:alert(1)', title: 'Not a link' },
            ],
          }),
          source(2),
        ],
        cited: [1],
      },
      global: { plugins: [router] },
    })
    const [perplexity, pdf] = w.findAll('[data-testid="source"]')
    expect(perplexity!.get('.where').text().replace(/\s+/g, ' ')).toContain(
      'turn 3 · figs and Newton > Similarity',
    )
    expect(perplexity!.find('a[href^="https://www.perplexity.ai"]').exists()).toBe(true)
    const webs = perplexity!.findAll('[data-testid="web-source"]')
    expect(webs.map((li) => li.text())).toEqual([
      '[2] en.wikipedia.org/wiki/Isaac_Newton ↗',
      '[5] All about figs ↗',
    ])
    const links = perplexity!.findAll('[data-testid="web-source"] a')
    expect(links.map((a) => a.attributes('href'))).toEqual([
      'https://en.wikipedia.org/wiki/Isaac_Newton',
      'https://example.org/figs',
    ])
    for (const a of links) {
      expect(a.attributes('target')).toBe('_blank')
      expect(a.attributes('rel')).toBe('noopener noreferrer')
    }
    expect(pdf!.find('[data-testid="web-source"]').exists()).toBe(false)
  })
})
