import { mount } from '@vue/test-utils'
import { describe, expect, it, vi } from 'vitest'
import { createMemoryHistory, createRouter } from 'vue-router'

import { storedMessage } from '@/__tests__/fixtures'
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
