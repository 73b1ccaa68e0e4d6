import { afterEach, describe, expect, it, vi } from 'vitest'

import { fetchRoutes, errorJson, json, source, sse, streamResponse } from '@/__tests__/fixtures'
import { ApiError } from '../client'
import { listConversations, sendFeedback, streamChat, type ChatEvent } from '../chat'

afterEach(() => vi.unstubAllGlobals())

const start = {
  conversation_id: 4,
  user_message_id: 9,
  question: 'q',
  standalone_question: 'q',
  mode: 'extractive',
  model: null,
  notices: [],
}

describe('streamChat', () => {
  it('POSTs the request and delivers the events in order', async () => {
    const body = sse([
      ['start', start],
      ['sources', { sources: [source(1)] }],
      ['token', { text: 'Tides [1]' }],
      ['done', { message_id: 10, conversation_id: 4, answer: 'Tides [1]', citations: [1] }],
    ])
    const fetch = vi.fn(async () =>
      streamResponse([': ping\n\n', body.slice(0, 50), body.slice(50)]),
    )
    vi.stubGlobal('fetch', fetch)
    const seen: ChatEvent[] = []
    await streamChat({ message: 'q', llm: false }, (e) => seen.push(e))
    expect(seen.map((e) => e.event)).toEqual(['start', 'sources', 'token', 'done'])
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit]
    expect(url).toBe('/api/chat')
    expect(init.method).toBe('POST')
    expect(JSON.parse(init.body as string)).toEqual({ message: 'q', llm: false })
  })

  it('skips unknown events and malformed data', async () => {
    vi.stubGlobal('fetch', async () =>
      streamResponse([
        'event: future\ndata: {}\n\nevent: token\ndata: not json\n\n',
        sse([
          ['error', { status: 503, code: 'x', message: 'down', retryable: true, message_id: null }],
        ]),
      ]),
    )
    const seen: string[] = []
    await streamChat({ message: 'q' }, (e) => seen.push(e.event))
    expect(seen).toEqual(['error'])
  })

  it('rejects with the API error before the stream starts', async () => {
    vi.stubGlobal('fetch', async () =>
      errorJson(404, 'not_found', 'conversation 99 does not exist'),
    )
    const err = await streamChat({ message: 'q', conversation_id: 99 }, () => {}).catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err.status).toBe(404)
    expect(err.message).toBe('conversation 99 does not exist')
  })

  it('reports a stream cut before done as an error event', async () => {
    vi.stubGlobal('fetch', async () => streamResponse([sse([['start', start]])]))
    const seen: ChatEvent[] = []
    await streamChat({ message: 'q' }, (e) => seen.push(e))
    expect(seen.at(-1)?.event).toBe('error')
  })
})

describe('conversations and feedback', () => {
  it('lists conversations and posts feedback', async () => {
    const posted: unknown[] = []
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/conversations': () =>
          json({
            conversations: [
              { id: 1, title: 't', created_at: '', updated_at: '', message_count: 2 },
            ],
          }),
        'POST /api/messages/10/feedback': (init) => {
          posted.push(JSON.parse(init!.body as string))
          return json(
            { id: 1, message_id: 10, rating: -1, comment: 'wrong page', created_at: '' },
            201,
          )
        },
      }),
    )
    expect((await listConversations())[0]!.title).toBe('t')
    await sendFeedback(10, { rating: -1, comment: 'wrong page' })
    expect(posted).toEqual([{ rating: -1, comment: 'wrong page' }])
  })
})
