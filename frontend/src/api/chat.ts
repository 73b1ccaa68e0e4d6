// POST /api/chat (SSE), conversations and feedback (docs/chat-api.md). Request and response
// bodies come from the generated schema; the SSE events and the Source shape are not in the
// OpenAPI schema, so they are written here from the contract.
import { authHeaders } from './auth'
import { errorFrom, request, type Schemas } from './client'
import { readEvents } from './sse'

export type Strategy = 'precise' | 'exhaustive'
export type HydeMode = 'off' | 'fusion' | 'supplement'
export type AnswerMode = 'llm' | 'extractive'

// Defaults (rerank, llm) are optional to send, though the generated type lists them.
export type ChatRequest = Omit<Schemas['ChatIn'], 'rerank' | 'llm'> & {
  rerank?: boolean
  llm?: boolean
}

export interface Source {
  n: number
  chunk_id: number
  document_id: number
  title: string
  kind: string
  filename: string
  page: number
  heading_path: string
  passage: string
  highlights: [number, number][]
  quote: string | null
  url: string | null
  view: string | null
  score: number | null
}

export interface Plan {
  strategy: string
  queries: string[]
  hard_keywords: string[]
  hyde_passage: string | null
  source: string
}

export interface StartEvent {
  conversation_id: number
  user_message_id: number
  question: string
  standalone_question: string
  mode: AnswerMode
  model: string | null
  notices: string[]
}

export interface RetrievalEvent {
  counts: Record<string, number>
  timings_ms: Record<string, number>
  notices: string[]
  hyde_used: boolean
  rerank: Record<string, unknown> | null
  candidates: number
  round: number
}

export interface StageEvent {
  stage: 'map' | 'filter' | 'answer' | 'verify'
  done: number
  total: number
}

export interface VerifyEvent {
  status: 'ok' | 'missed-info'
  suggestion: string | null
  round: number
}

export interface DoneEvent {
  message_id: number
  conversation_id: number
  answer: string
  citations: number[]
  mode: AnswerMode
  model: string | null
  timings_ms: Record<string, number>
  status: 'complete'
}

export interface ErrorEvent {
  status: number
  code: string
  message: string
  retryable: boolean
  message_id: number | null
}

export type ChatEvent =
  | { event: 'start'; data: StartEvent }
  | { event: 'plan'; data: Plan }
  | { event: 'retrieval'; data: RetrievalEvent }
  | { event: 'stage'; data: StageEvent }
  | { event: 'sources'; data: { sources: Source[] } }
  | { event: 'token'; data: { text: string } }
  | { event: 'verify'; data: VerifyEvent }
  | { event: 'done'; data: DoneEvent }
  | { event: 'error'; data: ErrorEvent }

const KNOWN = new Set([
  'start',
  'plan',
  'retrieval',
  'stage',
  'sources',
  'token',
  'verify',
  'done',
  'error',
])

/**
 * Ask a question; `onEvent` sees every event in order. Resolves when the stream ends (after
 * `done` or `error`); a stream cut before either yields a synthetic `error` event. Errors before
 * the stream starts (400/404/422) reject with an ApiError; `signal` stops the stream.
 */
export async function streamChat(
  body: ChatRequest,
  onEvent: (ev: ChatEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const resp = await fetch('/api/chat', {
    method: 'POST',
    headers: { ...authHeaders(), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal,
  })
  if (!resp.ok || !resp.body) throw errorFrom(resp.status, await resp.text())
  let ended = false
  for await (const msg of readEvents(resp.body)) {
    if (!KNOWN.has(msg.event)) continue
    let data: unknown
    try {
      data = JSON.parse(msg.data)
    } catch {
      continue
    }
    onEvent({ event: msg.event, data } as ChatEvent)
    if (msg.event === 'done' || msg.event === 'error') ended = true
  }
  if (!ended) {
    onEvent({
      event: 'error',
      data: {
        status: 0,
        code: 'stream_cut',
        message: 'the answer stream ended early; the server may have restarted',
        retryable: true,
        message_id: null,
      },
    })
  }
}

export type Feedback = Schemas['FeedbackIn'] & { comment: string | null }

/** A stored message; the JSON columns typed as the events that produced them. */
export type Message = Omit<Schemas['MessageOut'], 'sources' | 'plan' | 'verify' | 'feedback'> & {
  sources: Source[]
  plan: Plan | null
  verify: VerifyEvent | null
  feedback: { rating: number; comment?: string | null } | null
}

export type ConversationBrief = Schemas['ConversationBrief']

export type Conversation = Omit<Schemas['ConversationOut'], 'messages'> & { messages: Message[] }

export async function listConversations(): Promise<ConversationBrief[]> {
  return (await request<Schemas['ConversationList']>('/api/conversations')).conversations
}

export function getConversation(id: number): Promise<Conversation> {
  return request<Conversation>(`/api/conversations/${id}`)
}

export function deleteConversation(id: number): Promise<void> {
  return request<void>(`/api/conversations/${id}`, { method: 'DELETE' })
}

export function sendFeedback(
  messageId: number,
  feedback: Feedback,
): Promise<Schemas['FeedbackCreated']> {
  return request(`/api/messages/${messageId}/feedback`, { method: 'POST', json: feedback })
}
