import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'

import { source, storedMessage } from '@/__tests__/fixtures'
import * as api from '@/api/chat'
import { ApiError } from '@/api/client'
import { useChatStore } from '../chat'

vi.mock('@/api/chat', () => ({
  streamChat: vi.fn(),
  listConversations: vi.fn(async () => []),
  getConversation: vi.fn(),
  deleteConversation: vi.fn(async () => undefined),
  sendFeedback: vi.fn(async () => ({})),
}))

const streamChat = vi.mocked(api.streamChat)

const start: api.StartEvent = {
  conversation_id: 4,
  user_message_id: 9,
  question: 'What about tides?',
  standalone_question: 'What about tides?',
  mode: 'extractive',
  model: null,
  notices: ['no LLM reachable: extractive answer'],
}

beforeEach(() => {
  setActivePinia(createPinia())
  vi.clearAllMocks()
})

describe('chat store', () => {
  it('streams an answer: progress, sources, tokens, then the stored answer', async () => {
    const seenDuring: string[] = []
    streamChat.mockImplementation(async (req, on) => {
      expect(req).toMatchObject({
        message: 'What about tides?',
        conversation_id: null,
        llm: true,
        rerank: true,
      })
      on({ event: 'start', data: start })
      on({
        event: 'plan',
        data: {
          strategy: 'precise',
          queries: ['tides'],
          hard_keywords: [],
          hyde_passage: null,
          source: 'heuristic',
        },
      })
      on({
        event: 'retrieval',
        data: {
          counts: { bm25: 5, fused: 5 },
          timings_ms: { total: 12 },
          notices: [],
          hyde_used: false,
          rerank: null,
          candidates: 5,
          round: 1,
        },
      })
      on({ event: 'sources', data: { sources: [source(1), source(2)] } })
      on({ event: 'token', data: { text: 'Tides rise' } })
      seenDuring.push(useChatStore().messages[1]!.content)
      on({ event: 'token', data: { text: ' twice [1] [9]' } })
      on({
        event: 'done',
        data: {
          message_id: 10,
          conversation_id: 4,
          answer: 'Tides rise twice [1]',
          citations: [1],
          mode: 'extractive',
          model: null,
          timings_ms: {},
          status: 'complete',
        },
      })
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
    })
    expect(chat.sources).toHaveLength(2)
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
      hydeMode: 'off',
      documentIds: [3],
      kinds: ['pdf'],
      llm: false,
    })
    await chat.ask('list every treaty')
    expect(streamChat.mock.calls[0]![0]).toMatchObject({
      strategy: 'exhaustive',
      hyde_mode: 'off',
      document_ids: [3],
      kinds: ['pdf'],
      llm: false,
    })
  })

  it('tracks LLM stage progress', async () => {
    streamChat.mockImplementation(async (_req, on) => {
      on({ event: 'start', data: { ...start, mode: 'llm', model: 'ollama:llama3.2' } })
      on({ event: 'stage', data: { stage: 'map', done: 2, total: 5 } })
      expect(useChatStore().progress!.stages.map).toEqual({ stage: 'map', done: 2, total: 5 })
      on({ event: 'stage', data: { stage: 'verify', done: 0, total: 1 } })
      expect(useChatStore().progress!.phase).toBe('verifying')
    })
    const chat = useChatStore()
    await chat.ask('q')
    expect(chat.messages[1]!.mode).toBe('llm')
    expect(chat.messages[1]!.model).toBe('ollama:llama3.2')
  })

  it('stop() aborts the stream and keeps the partial answer as interrupted', async () => {
    let signal: AbortSignal | undefined
    streamChat.mockImplementation(
      (_req, on, s) =>
        new Promise((_resolve, reject) => {
          signal = s
          on({ event: 'start', data: start })
          on({ event: 'token', data: { text: 'Partial' } })
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
    expect(chat.running).toBe(false)
  })

  it('shows errors: in the stream, and before it', async () => {
    streamChat.mockImplementationOnce(async (_req, on) => {
      on({ event: 'start', data: start })
      on({
        event: 'error',
        data: {
          status: 503,
          code: 'llm_unavailable',
          message: 'Ollama is down',
          retryable: true,
          message_id: 11,
        },
      })
    })
    const chat = useChatStore()
    await chat.ask('q')
    expect(chat.messages[1]).toMatchObject({ status: 'error', error: 'Ollama is down', id: 11 })

    streamChat.mockRejectedValueOnce(
      new ApiError({ status: 400, code: 'bad_request', message: 'message too long' }),
    )
    await chat.ask('q2')
    expect(chat.messages[3]).toMatchObject({ status: 'error', error: 'message too long' })
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
    expect(chat.sources).toHaveLength(1)
    await chat.rate(chat.messages[1]!, -1, 'wrong page')
    expect(api.sendFeedback).toHaveBeenCalledWith(2, { rating: -1, comment: 'wrong page' })
    expect(chat.messages[1]!.feedback).toEqual({ rating: -1, comment: 'wrong page' })
    await chat.remove(4)
    expect(chat.conversationId).toBeNull()
    expect(chat.messages).toEqual([])
  })
})
