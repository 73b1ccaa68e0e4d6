import { mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nextTick } from 'vue'

import {
  chatSse,
  doc,
  doneEvent,
  fetchRoutes,
  language,
  localName,
  startEvent,
  streamResponse,
} from '@/__tests__/fixtures'
import { useChatStore } from '@/stores/chat'
import { useLibraryStore } from '@/stores/library'
import ChatOptions from '../ChatOptions.vue'

beforeEach(() => setActivePinia(createPinia()))
afterEach(() => vi.unstubAllGlobals())

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

  it('offers a language filter only when the library holds more than one language', async () => {
    const library = useLibraryStore()
    library.languages = [language('en')]
    const w = mount(ChatOptions)
    expect(w.find('[data-testid="language-filter"]').exists()).toBe(false)
    library.languages = [
      language('en', { documents: 4 }),
      language('ja', { name: 'Japanese', covered: false }),
    ]
    await nextTick()
    const labels = w.findAll('[data-testid="language-filter"] label')
    expect(labels.map((l) => l.text())).toEqual([
      `${localName('en')} (4)`,
      `${localName('ja')} (1)`,
    ])
    expect(labels[1]!.attributes('title')).toBe('ja')
  })

  it('sends the chosen languages in the chat request body, beside the kinds', async () => {
    const bodies: unknown[] = []
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'POST /api/chat': async (request) => {
          bodies.push(await request.json())
          return streamResponse([chatSse([startEvent(), doneEvent()])])
        },
        'GET /api/conversations': () => new Response('{"conversations": []}'),
      }),
    )
    const chat = useChatStore()
    useLibraryStore().languages = [language('en'), language('fr'), language('zh-Hant')]
    const w = mount(ChatOptions)
    const box = (tag: string) => w.get(`[data-testid="language-filter"] input[value="${tag}"]`)
    await box('fr').setValue(true)
    await box('zh-Hant').setValue(true)
    await box('fr').setValue(false)
    await box('en').setValue(true)
    expect(w.get('summary').text()).toContain('2 filters')
    await chat.ask('Où est la marée ?')
    expect(bodies).toEqual([
      expect.objectContaining({
        kinds: [],
        languages: ['zh-Hant', 'en'],
        message: 'Où est la marée ?',
      }),
    ])
  })
})
