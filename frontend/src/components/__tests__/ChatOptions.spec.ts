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

const STUB_LINK = { template: '<a><slot /></a>' }

beforeEach(() => setActivePinia(createPinia()))
afterEach(() => vi.unstubAllGlobals())

describe('ChatOptions', () => {
  it('says whether Rerank uses the cross-encoder, and where to get one', async () => {
    const chat = useChatStore()
    const w = mount(ChatOptions, { global: { stubs: { RouterLink: STUB_LINK } } })
    const hint = () => w.get('[data-testid="rerank-hint"]')
    expect(hint().text()).toContain('when one is installed')
    chat.reranker = false
    await nextTick()
    expect(hint().text()).toContain('no cross-encoder is loaded')
    expect(hint().find('a').text()).toBe('Download one')
    chat.reranker = true
    await nextTick()
    expect(hint().text()).toBe('Reorder the best passages before answering, by the cross-encoder.')
    expect(w.get('input[name="rerank"]').attributes('disabled')).toBeUndefined()
  })

  it('says who will answer: the LLM, or the extractive mode', async () => {
    const chat = useChatStore()
    const w = mount(ChatOptions, { global: { stubs: { RouterLink: STUB_LINK } } })
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
    await w.get('input[name="llm"]').setValue(false)
    expect(chat.options.llm).toBe(false)
    expect(answerer()).toBe('extractive only')
    await w.get('input[name="llm"]').setValue(true)
    chat.llm = { mode: 'extractive', backends: [] }
    await nextTick()
    expect(answerer()).toBe('extractive (no LLM reachable)')
  })

  it('explains every option, and shows "Use the LLM" disabled with the reason when no model answers', async () => {
    const chat = useChatStore()
    const w = mount(ChatOptions, {
      global: { stubs: { RouterLink: { template: '<a><slot /></a>' } } },
    })
    for (const name of ['strategy', 'hyde', 'llm', 'rerank']) {
      const control = w.get(`[name="${name}"]`)
      const hint = w.get(`#${control.attributes('aria-describedby')}`)
      expect(hint.text().length).toBeGreaterThan(20)
    }
    expect(w.get('input[name="llm"]').attributes('disabled')).toBeUndefined()
    chat.llm = { mode: 'extractive', backends: [] }
    await nextTick()
    expect(w.get('input[name="llm"]').attributes('disabled')).toBeDefined()
    expect(w.get('[data-testid="llm-hint"]').text()).toContain('No language model is reachable')
    expect(w.get('[data-testid="llm-hint"] a').text()).toBe('Set one up')
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
    const picker = w.get('[data-testid="document-filter"]')
    const listed = () => picker.findAll('.doc-list label').map((l) => l.text())
    expect(listed()).toEqual(['Doc 1', 'Tides'])
    await picker.get('input[type="search"]').setValue('tid')
    expect(listed()).toEqual(['Tides'])
    await picker.get('input[name="document"]').setValue(true)
    expect(picker.findAll('.chip').map((c) => c.text())).toEqual(['Tides ×'])
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

  it('offers a source filter only when the library holds documents from several', async () => {
    const library = useLibraryStore()
    library.origins = [{ origin: 'upload', documents: 3, chunks: 30 }]
    const w = mount(ChatOptions)
    expect(w.find('[data-testid="origin-filter"]').exists()).toBe(false)
    expect(w.find('select[name="collections"]').exists()).toBe(false)
    expect(w.find('select[name="tags"]').exists()).toBe(false)
    library.origins = [
      { origin: 'zotero', documents: 40, chunks: 900 },
      { origin: 'upload', documents: 3, chunks: 30 },
      { origin: 'chatgpt', documents: 12, chunks: 80 },
    ]
    await nextTick()
    const labels = w.findAll('[data-testid="origin-filter"] label').map((l) => l.text())
    expect(labels).toEqual(['Upload (3)', 'ChatGPT (12)', 'Zotero (40)'])
  })

  it('sends the chosen sources, Zotero collections and tags in the chat request', async () => {
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
    const library = useLibraryStore()
    library.origins = [
      { origin: 'upload', documents: 3, chunks: 30 },
      { origin: 'folder', documents: 5, chunks: 50 },
      { origin: 'zotero', documents: 40, chunks: 900 },
    ]
    library.collections = [
      { name: 'Thesis', documents: 30 },
      { name: 'Thesis/Methods', documents: 12 },
    ]
    library.tags = [
      { name: 'review', documents: 4 },
      { name: 'sbp', documents: 9 },
    ]
    const w = mount(ChatOptions)
    const box = (o: string) => w.get(`[data-testid="origin-filter"] input[value="${o}"]`)
    await box('zotero').setValue(true)
    await box('folder').setValue(true)
    await box('folder').setValue(false)
    const pick = async (name: string, index: number) => {
      const select = w.get(`select[name="${name}"]`)
      ;(select.findAll('option')[index]!.element as HTMLOptionElement).selected = true
      await select.trigger('change')
      return select
    }
    const collections = await pick('collections', 1)
    expect(collections.findAll('option').map((o) => o.text())).toEqual([
      'Thesis (30)',
      'Thesis/Methods (12)',
    ])
    await pick('tags', 1)
    expect(w.get('summary').text()).toContain('3 filters')
    await chat.ask('Which methods?')
    expect(bodies).toEqual([
      expect.objectContaining({
        origins: ['zotero'],
        collections: ['Thesis/Methods'],
        tags: ['sbp'],
        message: 'Which methods?',
      }),
    ])
  })
})
