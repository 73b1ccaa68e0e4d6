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
    expect(items[0]!.text()).toContain('page 11')
    expect(items[0]!.get('mark.hit').text()).toBe('whales')
    expect(items[0]!.get('a.title').attributes('href')).toMatch(
      /^\/library\/3\/pages\/11\?chunk=101/,
    )
    expect(items[0]!.find('a[href="/api/documents/3/file#page=11"]').exists()).toBe(true)
    expect(items[1]!.text()).toContain('turn 2')
    expect(items[1]!.get('a[href^="https://www.perplexity.ai"]').text()).toContain('thread')
  })
})
