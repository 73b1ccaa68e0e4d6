// POST /api/chat (SSE), conversations and feedback (docs/chat-api.md). Every type here is the
// generated schema's: the events are backend/quire/synthesis/events.py.
import { bodyOf, client, isAbort, type Schemas } from './client'
import { readEvents, type SSEMessage } from './sse'

export type ChatEvent = Schemas['ChatEvent']
export type StartEvent = Schemas['StartEvent']
export type PlanEvent = Schemas['PlanEvent']
export type RetrievalEvent = Schemas['RetrievalEvent']
export type StageEvent = Schemas['StageEvent']
export type VerifyEvent = Schemas['VerifyEvent']
export type DoneEvent = Schemas['DoneEvent']
export type CitationCheck = Schemas['CitationCheck']
export type ErrorEvent = Schemas['ErrorEvent']
export type Source = Schemas['Source']
export type WebSource = Schemas['WebSource']
export type Plan = Schemas['Plan']
export type AnswerMode = DoneEvent['mode']

export type ChatRequest = Schemas['ChatIn']

/** What search reads of a question (backend/quire/retrieval/search.py MAX_QUERY_CHARS;
 * tests/test_frontend_limits.py holds the two equal): the composer refuses a longer one
 * before it is sent, rather than the search cutting it. */
export const QUESTION_MAX_CHARS = 2000
/** How the next question is answered: the request's retrieval options and `llm`. */
export type ChatOptions = Required<Omit<ChatRequest, 'message' | 'conversation_id'>>
export type Strategy = NonNullable<ChatRequest['strategy']>
export type HydeMode = NonNullable<ChatRequest['hyde_mode']>

// A record, so that an event the backend adds is a type error here until it is listed.
const EVENTS: Record<ChatEvent['event'], true> = {
  start: true,
  plan: true,
  retrieval: true,
  stage: true,
  sources: true,
  token: true,
  verify: true,
  done: true,
  error: true,
}

/** An SSE message as a chat event; null for an unknown event or malformed data (skipped). */
function parseEvent(msg: SSEMessage): ChatEvent | null {
  if (!Object.hasOwn(EVENTS, msg.event)) return null
  let data: unknown
  try {
    data = JSON.parse(msg.data)
  } catch {
    return null
  }
  // The name comes twice, as the SSE field and as the JSON's discriminator: they must agree.
  const named =
    typeof data === 'object' && data !== null && 'event' in data && data.event === msg.event
  return named ? (data as ChatEvent) : null
}

/** The events of a stream; a connection dropped mid-answer just ends them (a stop throws). */
async function* eventsOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<ChatEvent> {
  try {
    for await (const msg of readEvents(stream)) {
      const event = parseEvent(msg)
      if (event) yield event
    }
  } catch (err) {
    if (isAbort(err)) throw err
  }
}

/** What a stream that ended before `done` or `error` is reported as. */
export function streamCut(): ErrorEvent {
  return {
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
}

/**
 * Ask a question; `onEvent` sees every event in order. Resolves when the stream ends (after
 * `done` or `error`); a stream cut before either yields a synthetic `error` event. Errors before
 * the stream starts (400/404/422, the server unreachable) reject with an ApiError; `signal`
 * stops the stream (an AbortError).
 */
export async function streamChat(
  body: ChatRequest,
  onEvent: (ev: ChatEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const stream = await bodyOf(
    client.POST('/api/chat', {
      body,
      parseAs: 'stream',
      headers: { Accept: 'text/event-stream' },
      signal,
    }),
  )
  let ended = false
  for await (const event of eventsOf(stream)) {
    onEvent(event)
    if (event.event === 'done' || event.event === 'error') ended = true
  }
  if (!ended) onEvent(streamCut())
}

export type Feedback = Required<Schemas['FeedbackIn']>
export type Message = Schemas['MessageOut']
export type ConversationBrief = Schemas['ConversationBrief']
export type Conversation = Schemas['ConversationOut']

export async function listConversations(): Promise<ConversationBrief[]> {
  return (await bodyOf(client.GET('/api/conversations'))).conversations
}

export function getConversation(id: number): Promise<Conversation> {
  return bodyOf(
    client.GET('/api/conversations/{conversation_id}', {
      params: { path: { conversation_id: id } },
    }),
  )
}

export async function deleteConversation(id: number): Promise<void> {
  await client.DELETE('/api/conversations/{conversation_id}', {
    params: { path: { conversation_id: id } },
  })
}

export function sendFeedback(
  messageId: number,
  feedback: Feedback,
): Promise<Schemas['FeedbackCreated']> {
  return bodyOf(
    client.POST('/api/messages/{message_id}/feedback', {
      params: { path: { message_id: messageId } },
      body: feedback,
    }),
  )
}
