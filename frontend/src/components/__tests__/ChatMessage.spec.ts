import { mount } from '@vue/test-utils'
import { describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { citationCheck, storedMessage } from '@/__tests__/fixtures'
import type { ChatMessage as Msg } from '@/stores/chat'
import ChatMessage from '../ChatMessage.vue'

function message(over: Partial<Msg> = {}): Msg {
  return { ...storedMessage(), key: 'k', error: null, ...over }
}

function makeRouter() {
  const Empty = { template: '<div />' }
  return createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/', component: Empty },
      { path: '/library/:id/pages/:page', name: 'source', component: Empty },
    ],
  })
}

describe('ChatMessage', () => {
  it('renders the answer with citation links that open the source viewer', async () => {
    const router = makeRouter()
    await router.push('/')
    const push = vi.spyOn(router, 'push')
    const w = mount(ChatMessage, { props: { message: message() }, global: { plugins: [router] } })
    const cite = w.get('a.cite')
    expect(cite.text()).toBe('[1]')
    await cite.trigger('click', { button: 0 })
    expect(push).toHaveBeenCalledWith(expect.stringMatching(/^\/library\/3\/pages\/11\?chunk=101/))
  })

  it('says which mode answered', () => {
    const router = makeRouter()
    expect(
      mount(ChatMessage, { props: { message: message() }, global: { plugins: [router] } }).text(),
    ).toContain('Extractive')
    const llm = mount(ChatMessage, {
      props: { message: message({ mode: 'llm', model: 'ollama:llama3.2' }) },
      global: { plugins: [router] },
    })
    expect(llm.get('.mode').text()).toBe('LLM · ollama:llama3.2')
  })

  it('never renders executable markup from an answer', () => {
    const evil = message({
      content:
        'Quoted: <script>window.__pwned=1</script> <img src=x onerror="window.__pwned=2"> [1]',
    })
    const w = mount(ChatMessage, { props: { message: evil }, global: { plugins: [makeRouter()] } })
    const answer = w.get('[data-testid="answer"]').element
    expect(answer.querySelector('script, img')).toBeNull()
    expect(answer.textContent).toContain('<script>window.__pwned=1</script>')
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined()
  })

  it('rates an answer with an optional comment', async () => {
    const rate = vi.fn(async () => {})
    const w = mount(ChatMessage, {
      props: { message: message(), rate },
      global: { plugins: [makeRouter()] },
    })
    await w.get('button[aria-label="Not helpful"]').trigger('click')
    expect(rate).toHaveBeenLastCalledWith({ rating: -1, comment: null })
    await w.get('textarea').setValue('wrong page')
    await w.get('form.comment').trigger('submit')
    expect(rate).toHaveBeenLastCalledWith({ rating: -1, comment: 'wrong page' })
    expect(w.get('button[aria-label="Not helpful"]').attributes('aria-pressed')).toBe('true')
  })

  it('shows a stopped answer and errors', () => {
    const w = mount(ChatMessage, {
      props: { message: message({ status: 'interrupted', error: 'the LLM stopped' }) },
      global: { plugins: [makeRouter()] },
    })
    expect(w.text()).toContain('stopped')
    expect(w.get('[role="alert"]').text()).toBe('the LLM stopped')
  })

  it('says how its citations held against their sources', async () => {
    const checked = message({
      mode: 'llm',
      content: 'Tides rise twice a day [1]. Signed in 1999 [unsupported].',
      citations_checked: citationCheck(10, {
        kept: 7,
        dropped: 3,
        method: 'checked',
        dropped_citations: [
          { n: 2, claim: 'Signed in 1999', reason: 'the source does not contain 1999' },
        ],
      }),
    })
    const w = mount(ChatMessage, {
      props: { message: checked },
      global: { plugins: [makeRouter()] },
    })
    const box = w.get('[data-testid="citecheck"]')
    expect(box.get('summary').text()).toBe(
      '7 of 10 citations checked against their sources; 3 removed: the source does not say it',
    )
    expect(box.get('li').text()).toBe('[2] “Signed in 1999”: the source does not contain 1999')
    expect(w.get('.answer .unsupported').text()).toBe('[unsupported]')

    const quoted = message({ citations_checked: citationCheck(1) })
    const q = mount(ChatMessage, {
      props: { message: quoted },
      global: { plugins: [makeRouter()] },
    })
    expect(q.get('[data-testid="citecheck"] summary').text()).toBe(
      '1 citation, each quoted word for word from its source',
    )
    expect(q.get('[data-testid="citecheck"]').find('li').exists()).toBe(false)
    // Nothing to say while the answer streams, or when it cites nothing.
    for (const m of [message({ status: 'streaming' }), message({ citations_checked: null })]) {
      const none = mount(ChatMessage, {
        props: { message: m },
        global: { plugins: [makeRouter()] },
      })
      expect(none.find('[data-testid="citecheck"]').exists()).toBe(false)
    }
  })

  it('offers the export of a stored answer, not of one still streaming', () => {
    const stored = mount(ChatMessage, {
      props: { message: message() },
      global: { plugins: [makeRouter()] },
    })
    expect(stored.get('[aria-label="Export this answer"]').text()).toContain('Copy as Markdown')
    const streaming = mount(ChatMessage, {
      props: { message: message({ status: 'streaming' }) },
      global: { plugins: [makeRouter()] },
    })
    expect(streaming.find('[aria-label="Export this answer"]').exists()).toBe(false)
  })
})
