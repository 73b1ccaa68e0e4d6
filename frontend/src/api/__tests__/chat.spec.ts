import { afterEach, describe, expect, it, vi } from 'vitest'

import {
  chatRequest,
  chatSse,
  doneEvent,
  errorJson,
  fetchRoutes,
  json,
  offline,
  pathOf,
  source,
  startEvent,
  streamResponse,
} from '@/__tests__/fixtures'
import { ApiError } from '../client'
import { listConversations, sendFeedback, streamChat, type ChatEvent } from '../chat'

afterEach(() => vi.unstubAllGlobals())

const STREAM_CUT: ChatEvent = {
  event: 'error',
  error: {
    status: 0,
    code: 'stream_cut',
    message: 'the answer stream ended early; the server may have restarted',
    detail: null,
  },
  retryable: true,
  message_id: null,
}

/** A response whose body sends `text`, then fails with `fail` (or hangs until aborted). */
function failingBody(text: string, signal: AbortSignal, fail?: Error): Response {
  let sent = false
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      signal.addEventListener('abort', () =>
        controller.error(new DOMException('aborted', 'AbortError')),
      )
    },
    // Erroring in start() would drop the text still queued: fail on the read after it.
    pull(controller) {
      if (!sent) controller.enqueue(new TextEncoder().encode(text))
      else if (fail) controller.error(fail)
      sent = true
    },
  })
  return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } })
}

describe('streamChat', () => {
  it('POSTs the request and delivers the typed events in order', async () => {
    const events: ChatEvent[] = [
      startEvent(),
      { event: 'sources', sources: [source(1)] },
      { event: 'token', text: 'Tides [1]' },
      doneEvent({ answer: 'Tides [1]' }),
    ]
    const body = chatSse(events)
    const fetch = vi.fn<(req: Request) => Promise<Response>>(async () =>
      streamResponse([': ping\n\n', body.slice(0, 50), body.slice(50)]),
    )
    vi.stubGlobal('fetch', fetch)
    const seen: ChatEvent[] = []
    await streamChat(chatRequest({ llm: false }), (e) => seen.push(e))
    expect(seen).toEqual(events)
    const req = fetch.mock.calls[0]![0]
    expect(pathOf(req)).toBe('/api/chat')
    expect(req.method).toBe('POST')
    expect(req.headers.get('Accept')).toBe('text/event-stream')
    expect(await req.json()).toEqual(chatRequest({ llm: false }))
  })

  it('skips unknown events, malformed data and data that names another event', async () => {
    const failed: ChatEvent = {
      event: 'error',
      error: { status: 503, code: 'llm_unavailable', message: 'down', detail: null },
      retryable: true,
      message_id: null,
    }
    vi.stubGlobal('fetch', async () =>
      streamResponse([
        'event: future\ndata: {"event":"future"}\n\nevent: token\ndata: not json\n\n',
        'event: token\ndata: {"event":"done","text":"x"}\n\nevent: token\ndata: ["token"]\n\n',
        chatSse([failed]),
      ]),
    )
    const seen: ChatEvent[] = []
    await streamChat(chatRequest(), (e) => seen.push(e))
    expect(seen).toEqual([failed])
  })

  it('rejects with the API error before the stream starts', async () => {
    vi.stubGlobal('fetch', async () =>
      errorJson(404, 'not_found', 'conversation 99 does not exist'),
    )
    const err = await streamChat(chatRequest({ conversation_id: 99 }), () => {}).catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err.status).toBe(404)
    expect(err.message).toBe('conversation 99 does not exist')
  })

  it('rejects with a network_error ApiError when the server cannot be reached', async () => {
    vi.stubGlobal('fetch', offline)
    const seen: ChatEvent[] = []
    const err = await streamChat(chatRequest(), (e) => seen.push(e)).catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ status: 0, code: 'network_error' })
    expect(seen).toEqual([])
  })

  it('reports a stream cut before done as an error event', async () => {
    vi.stubGlobal('fetch', async () => streamResponse([chatSse([startEvent()])]))
    const seen: ChatEvent[] = []
    await streamChat(chatRequest(), (e) => seen.push(e))
    expect(seen.map((e) => e.event)).toEqual(['start', 'error'])
    expect(seen.at(-1)).toEqual(STREAM_CUT)
  })

  it('reports a connection dropped mid-answer as a cut stream', async () => {
    vi.stubGlobal('fetch', async (req: Request) =>
      failingBody(chatSse([startEvent()]), req.signal, new TypeError('network error')),
    )
    const seen: ChatEvent[] = []
    await streamChat(chatRequest(), (e) => seen.push(e))
    expect(seen).toEqual([startEvent(), STREAM_CUT])
  })

  it('stops on the signal with an AbortError, not an error event', async () => {
    vi.stubGlobal('fetch', async (req: Request) => failingBody(chatSse([startEvent()]), req.signal))
    const controller = new AbortController()
    const seen: ChatEvent[] = []
    const done = streamChat(
      chatRequest(),
      (e) => {
        seen.push(e)
        controller.abort()
      },
      controller.signal,
    )
    const err = await done.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DOMException)
    expect(err).toMatchObject({ name: 'AbortError' })
    expect(seen.map((e) => e.event)).toEqual(['start'])
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
        'POST /api/messages/10/feedback': async (req) => {
          posted.push(await req.json())
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
