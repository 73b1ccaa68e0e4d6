import { mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import { nextTick } from 'vue'

import { doc } from '@/__tests__/fixtures'
import { useChatStore } from '@/stores/chat'
import { useLibraryStore } from '@/stores/library'
import ChatOptions from '../ChatOptions.vue'

beforeEach(() => setActivePinia(createPinia()))

describe('ChatOptions', () => {
  it('says who will answer: the LLM, or the extractive mode', async () => {
    const chat = useChatStore()
    const w = mount(ChatOptions)
    const answerer = () => w.get('[data-testid="answerer"]').text()
    expect(answerer()).toBe('LLM if available')
    chat.llm = {
      mode: 'llm',
      backends: [
        { name: 'ollama', url: 'http://x', model: 'llama3.2', ok: true, error: null, models: [] },
      ],
    }
    await nextTick()
    expect(answerer()).toBe('LLM: llama3.2')
    chat.llm = { mode: 'extractive', backends: [] }
    await nextTick()
    expect(answerer()).toBe('extractive (no LLM reachable)')
    await w.get('input[name="llm"]').setValue(false)
    expect(chat.options.llm).toBe(false)
    expect(answerer()).toBe('extractive only')
  })

  it('sets strategy, HyDE and filters in the store', async () => {
    const chat = useChatStore()
    useLibraryStore().documents = [
      doc(1),
      doc(2, { status: 'processing' }),
      doc(3, { title: 'Tides' }),
    ]
    const w = mount(ChatOptions)
    await w.get('select[name="strategy"]').setValue('exhaustive')
    await w.get('select[name="hyde"]').setValue('fusion')
    const epub = w
      .findAll('fieldset input')
      .find((i) => i.element.parentElement!.textContent!.includes('epub'))!
    await epub.setValue(true)
    const docs = w.get('select[name="documents"]')
    expect(docs.findAll('option').map((o) => o.text())).toEqual(['Doc 1', 'Tides'])
    ;(docs.findAll('option')[1]!.element as HTMLOptionElement).selected = true
    await docs.trigger('change')
    expect(chat.options).toMatchObject({
      strategy: 'exhaustive',
      hyde_mode: 'fusion',
      kinds: ['epub'],
      document_ids: [3],
    })
    expect(w.get('summary').text()).toContain('2 filters')
  })
})
