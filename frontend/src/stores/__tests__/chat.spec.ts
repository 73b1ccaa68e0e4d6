import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'

import { citationCheck, doneEvent, source, startEvent, storedMessage } from '@/__tests__/fixtures'
import * as api from '@/api/chat'
import { ApiError } from '@/api/client'
import { useChatStore } from '../chat'

vi.mock('@/api/chat', async (importOriginal) => ({
  streamCut: (await importOriginal<typeof api>()).streamCut,
  streamChat: vi.fn(),
  listConversations: vi.fn(async () => []),
  getConversation: vi.fn(),
  deleteConversation: vi.fn(async () => undefined),
  sendFeedback: vi.fn(async () => ({})),
}))

const streamChat = vi.mocked(api.streamChat)

const start = startEvent({ notices: ['no LLM reachable: extractive answer'] })

beforeEach(() => {
  setActivePinia(createPinia())
  vi.clearAllMocks()
})

describe('chat store', () => {
  it('streams an answer: progress, sources, tokens, then the stored answer', async () => {
    const seenDuring: string[] = []
    streamChat.mockImplementation(async (req, on) => {
      expect(req).toEqual({
        message: 'What about tides?',
        conversation_id: null,
        strategy: null,
        hyde_mode: null,
        document_ids: [],
        kinds: [],
        languages: [],
        origins: [],
        collections: [],
        tags: [],
        llm: true,
        rerank: true,
      })
      on(start)
      on({
        event: 'plan',
        strategy: 'precise',
        queries: ['tides'],
        hard_keywords: [],
        hyde_passage: null,
        source: 'heuristic',
      })
      on({
        event: 'retrieval',
        counts: { bm25: 5, fused: 5 },
        timings_ms: { total: 12 },
        notices: [],
        hyde_used: false,
        rerank: null,
        candidates: 5,
        strategy: 'precise',
        round: 1,
      })
      on({ event: 'sources', sources: [source(1), source(2)] })
      on({ event: 'token', text: 'Tides rise' })
      seenDuring.push(useChatStore().messages[1]!.content)
      on({ event: 'token', text: ' twice [1] [9]' })
      on(
        doneEvent({
          answer: 'Tides rise twice [1]',
          notices: ['no LLM reachable: extractive answer', 'the answer was not verified.'],
          citations_checked: citationCheck(1),
        }),
      )
    })
    const chat = useChatStore()
    await chat.ask('  What about tides?  ')
    expect(seenDuring).toEqual(['Tides rise'])
    const [user, answer] = chat.messages
    expect(user).toMatchObject({ role: 'user', content: 'What about tides?', id: 9 })
    expect(answer).toMatchObject({
      role: 'assistant',
      id: 10,
      content: 'Tides rise twice [1]',
      citations: [1],
      status: 'complete',
      mode: 'extractive',
      notices: ['no LLM reachable: extractive answer', 'the answer was not verified.'],
      citations_checked: { checked: 1, kept: 1, dropped: 0, method: 'verbatim' },
    })
    expect(answer!.plan).toMatchObject({ strategy: 'precise', queries: ['tides'] })
    expect(chat.lastAnswer?.sources).toHaveLength(2)
    expect(chat.conversationId).toBe(4)
    expect(chat.running).toBe(false)
    expect(chat.progress!.plan!.strategy).toBe('precise')
    expect(chat.progress!.retrieval).toHaveLength(1)
    expect(chat.progress!.notices).toContain('no LLM reachable: extractive answer')
    expect(api.listConversations).toHaveBeenCalled()
  })

  it('sends the mode controls and filters', async () => {
    streamChat.mockResolvedValue()
    const chat = useChatStore()
    Object.assign(chat.options, {
      strategy: 'exhaustive',
      hyde_mode: 'off',
      document_ids: [3],
      kinds: ['pdf'],
      languages: ['ja', 'zh-Hans'],
      origins: ['zotero', 'folder'],
      collections: ['Thesis/Methods'],
      tags: ['sbp'],
      llm: false,
    })
    await chat.ask('list every treaty')
    expect(streamChat.mock.calls[0]![0]).toEqual({
      message: 'list every treaty',
      conversation_id: null,
      strategy: 'exhaustive',
      hyde_mode: 'off',
      document_ids: [3],
      kinds: ['pdf'],
      languages: ['ja', 'zh-Hans'],
      origins: ['zotero', 'folder'],
      collections: ['Thesis/Methods'],
      tags: ['sbp'],
      rerank: true,
      llm: false,
    })
  })

  it('tracks LLM stage progress and the verification', async () => {
    streamChat.mockImplementation(async (_req, on) => {
      on({ ...start, mode: 'llm', model: 'ollama:llama3.2' })
      on({ event: 'stage', stage: 'map', done: 2, total: 5 })
      expect(useChatStore().progress!.stages.map).toMatchObject({ done: 2, total: 5 })
      expect(useChatStore().progress!.phase).toBe('answering')
      on({ event: 'stage', stage: 'verify', done: 0, total: 1 })
      expect(useChatStore().progress!.phase).toBe('verifying')
      on({ event: 'verify', status: 'missed-info', suggestion: 'the 1990 treaty', round: 1 })
    })
    const chat = useChatStore()
    await chat.ask('q')
    expect(chat.messages[1]!.mode).toBe('llm')
    expect(chat.messages[1]!.model).toBe('ollama:llama3.2')
    expect(chat.messages[1]!.verify).toMatchObject({
      status: 'missed-info',
      suggestion: 'the 1990 treaty',
    })
  })

  it('stop() aborts the stream and keeps the partial answer as interrupted', async () => {
    let signal: AbortSignal | undefined
    streamChat.mockImplementation(
      (_req, on, s) =>
        new Promise((_resolve, reject) => {
          signal = s
          on(start)
          on({ event: 'token', text: 'Partial' })
          s!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))
        }),
    )
    const chat = useChatStore()
    const done = chat.ask('q')
    expect(chat.running).toBe(true)
    chat.stop()
    await done
    expect(signal!.aborted).toBe(true)
    expect(chat.messages[1]).toMatchObject({ content: 'Partial', status: 'interrupted' })
    expect(chat.messages[1]!.error).toBeNull()
    expect(chat.running).toBe(false)
  })

  it('shows errors: in the stream, after part of the answer, and before it', async () => {
    streamChat.mockImplementationOnce(async (_req, on) => {
      on(start)
      on({
        event: 'error',
        error: { status: 503, code: 'llm_unavailable', message: 'Ollama is down', detail: null },
        retryable: true,
        message_id: 11,
      })
    })
    const chat = useChatStore()
    await chat.ask('q')
    expect(chat.messages[1]).toMatchObject({ status: 'error', error: 'Ollama is down', id: 11 })

    streamChat.mockImplementationOnce(async (_req, on) => {
      on(start)
      on({ event: 'token', text: 'Half an' })
      on(api.streamCut())
    })
    await chat.ask('q2')
    expect(chat.messages[3]).toMatchObject({
      status: 'interrupted',
      content: 'Half an',
      error: 'the answer stream ended early; the server may have restarted',
    })

    streamChat.mockRejectedValueOnce(
      new ApiError({ status: 400, code: 'bad_request', message: 'message too long' }),
    )
    await chat.ask('q3')
    expect(chat.messages[5]).toMatchObject({ status: 'error', error: 'message too long' })
  })

  it('opens a stored conversation and rates an answer', async () => {
    vi.mocked(api.getConversation).mockResolvedValue({
      id: 4,
      title: 'Tides',
      created_at: '',
      updated_at: '',
      messages: [
        storedMessage({
          id: 1,
          role: 'user',
          content: 'q',
          sources: [],
          citations: [],
          mode: null,
        }),
        storedMessage({ id: 2, content: 'a [1]' }),
      ],
    })
    const chat = useChatStore()
    await chat.open(4)
    expect(chat.title).toBe('Tides')
    expect(chat.lastAnswer?.sources).toHaveLength(1)
    await chat.rate(chat.messages[1]!, -1, 'wrong page')
    expect(api.sendFeedback).toHaveBeenCalledWith(2, { rating: -1, comment: 'wrong page' })
    expect(chat.messages[1]!.feedback).toEqual({ rating: -1, comment: 'wrong page' })
    await chat.remove(4)
    expect(chat.conversationId).toBeNull()
    expect(chat.messages).toEqual([])
  })
})
