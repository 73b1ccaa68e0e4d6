// Conversations and the answer being streamed. The view only calls ask/stop/open/rate; every
// SSE event lands here, so the UI is a projection of this state.
import { defineStore } from 'pinia'
import { computed, reactive, ref } from 'vue'

import * as api from '@/api/chat'
import type {
  AnswerMode,
  ChatOptions,
  ConversationBrief,
  Message,
  PlanEvent,
  RetrievalEvent,
  StageEvent,
} from '@/api/chat'
import { isAbort, messageOf } from '@/api/client'
import { getHealth, getLlmStatus, type LlmStatus } from '@/api/health'

/** A message as shown: stored messages plus the one still streaming. */
export interface ChatMessage extends Omit<Message, 'id' | 'status'> {
  id: number | null
  /** Client-side key, stable while `id` is still unknown. */
  key: string
  status: Message['status'] | 'streaming'
  error: string | null
}

export interface Progress {
  phase: 'starting' | 'planning' | 'retrieving' | 'answering' | 'verifying' | 'done'
  plan: PlanEvent | null
  retrieval: RetrievalEvent[]
  stages: Partial<Record<StageEvent['stage'], StageEvent>>
  notices: string[]
}

let keySeq = 0
const newKey = () => `m${++keySeq}`

function blank(role: ChatMessage['role'], content: string): ChatMessage {
  return {
    id: null,
    key: newKey(),
    role,
    content,
    sources: [],
    citations: [],
    plan: null,
    timings_ms: null,
    mode: null,
    model: null,
    status: 'complete',
    verify: null,
    notices: [],
    citations_checked: null,
    created_at: new Date().toISOString(),
    feedback: null,
    error: null,
  }
}

function fromStored(m: Message): ChatMessage {
  return { ...m, key: `s${m.id}`, error: null }
}

export const useChatStore = defineStore('chat', () => {
  const conversations = ref<ConversationBrief[]>([])
  const conversationId = ref<number | null>(null)
  const title = ref('')
  const messages = ref<ChatMessage[]>([])
  const progress = ref<Progress | null>(null)
  const running = ref(false)
  const loadError = ref<string | null>(null)
  const options = reactive<ChatOptions>({
    strategy: null,
    hyde_mode: null,
    document_ids: [],
    kinds: [],
    languages: [],
    origins: [],
    collections: [],
    tags: [],
    rerank: true,
    llm: true,
  })
  /** Which LLM would answer now (GET /api/llm); null until known or when unavailable. */
  const llm = ref<LlmStatus | null>(null)
  /** Whether search reranks with a cross-encoder (GET /api/health); null until known. */
  const reranker = ref<boolean | null>(null)
  let controller: AbortController | null = null

  /** The latest answer: its sources are the sources panel's unless the reader chose another. */
  const lastAnswer = computed(() =>
    [...messages.value].reverse().find((m) => m.role === 'assistant'),
  )
  const mode = computed<AnswerMode | null>(() => lastAnswer.value?.mode ?? null)

  async function loadConversations(): Promise<void> {
    try {
      conversations.value = await api.listConversations()
      loadError.value = null
    } catch (err) {
      loadError.value = messageOf(err)
    }
  }

  async function loadLlm(): Promise<void> {
    try {
      llm.value = await getLlmStatus()
    } catch {
      llm.value = null
    }
  }

  async function loadReranker(): Promise<void> {
    try {
      reranker.value = (await getHealth()).reranker?.loaded ?? false
    } catch {
      reranker.value = null
    }
  }

  async function open(id: number | null): Promise<void> {
    if (id !== null && id === conversationId.value && messages.value.length) return
    if (running.value) stop()
    conversationId.value = id
    progress.value = null
    if (id === null) {
      messages.value = []
      title.value = ''
      return
    }
    try {
      const conv = await api.getConversation(id)
      if (conversationId.value !== id) return
      title.value = conv.title
      messages.value = conv.messages.filter((m) => m.role !== 'system').map(fromStored)
      loadError.value = null
    } catch (err) {
      messages.value = []
      loadError.value = messageOf(err)
    }
  }

  async function ask(question: string): Promise<void> {
    const text = question.trim()
    if (!text || running.value) return
    const user = blank('user', text)
    const answer = blank('assistant', '')
    answer.status = 'streaming'
    messages.value.push(user, answer)
    // Mutate through the reactive copies so the UI follows.
    const live = messages.value[messages.value.length - 1]!
    const asked = messages.value[messages.value.length - 2]!
    progress.value = { phase: 'starting', plan: null, retrieval: [], stages: {}, notices: [] }
    running.value = true
    controller = new AbortController()
    const request: api.ChatRequest = {
      ...options,
      message: text,
      conversation_id: conversationId.value,
    }
    try {
      await api.streamChat(request, (ev) => apply(ev, asked, live), controller.signal)
    } catch (err) {
      if (isAbort(err)) {
        live.status = 'interrupted'
      } else {
        live.status = 'error'
        live.error = messageOf(err)
      }
    } finally {
      running.value = false
      controller = null
      if (progress.value) progress.value.phase = 'done'
      if (live.status === 'streaming') live.status = 'interrupted'
      void loadConversations()
    }
  }

  function apply(ev: api.ChatEvent, user: ChatMessage, live: ChatMessage): void {
    const p = progress.value!
    switch (ev.event) {
      case 'start':
        conversationId.value = ev.conversation_id ?? conversationId.value
        user.id = ev.user_message_id
        live.mode = ev.mode
        live.model = ev.model
        live.notices = [...ev.notices]
        p.notices.push(...ev.notices)
        p.phase = 'planning'
        if (!title.value) title.value = ev.question.slice(0, 80)
        break
      case 'plan':
        live.plan = ev
        p.plan = ev
        p.phase = 'retrieving'
        break
      case 'retrieval':
        p.retrieval.push(ev)
        p.notices.push(...ev.notices.filter((n) => !p.notices.includes(n)))
        p.phase = 'answering'
        break
      case 'stage':
        p.stages[ev.stage] = ev
        p.phase = ev.stage === 'verify' ? 'verifying' : 'answering'
        break
      case 'sources':
        live.sources = ev.sources
        break
      case 'token':
        live.content += ev.text
        p.phase = 'answering'
        break
      case 'verify':
        live.verify = ev
        break
      case 'done':
        live.id = ev.message_id
        live.content = ev.answer
        live.citations = ev.citations
        live.mode = ev.mode
        live.model = ev.model
        live.notices = [...ev.notices]
        live.timings_ms = ev.timings_ms
        live.citations_checked = ev.citations_checked
        live.status = 'complete'
        conversationId.value = ev.conversation_id ?? conversationId.value
        break
      case 'error':
        live.id = ev.message_id
        live.status = live.content ? 'interrupted' : 'error'
        live.error = ev.error.message
        break
    }
  }

  /** Stop the answer being written; the server keeps what was written as `interrupted`. */
  function stop(): void {
    controller?.abort()
  }

  async function rate(message: ChatMessage, rating: 1 | -1, comment: string | null): Promise<void> {
    if (message.id === null) return
    await api.sendFeedback(message.id, { rating, comment })
    message.feedback = { rating, comment }
  }

  async function remove(id: number): Promise<void> {
    await api.deleteConversation(id)
    conversations.value = conversations.value.filter((c) => c.id !== id)
    if (conversationId.value === id) await open(null)
  }

  return {
    conversations,
    conversationId,
    title,
    messages,
    progress,
    running,
    loadError,
    options,
    lastAnswer,
    mode,
    llm,
    loadLlm,
    reranker,
    loadReranker,
    loadConversations,
    open,
    ask,
    stop,
    rate,
    remove,
  }
})
