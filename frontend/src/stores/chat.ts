// Conversations and the answer being streamed. The view only calls ask/stop/open/rate; every
// SSE event lands here, so the UI is a projection of this state.
import { defineStore } from 'pinia'
import { computed, reactive, ref } from 'vue'

import * as api from '@/api/chat'
import type {
  AnswerMode,
  ConversationBrief,
  HydeMode,
  Message,
  Plan,
  RetrievalEvent,
  Source,
  StageEvent,
  Strategy,
  VerifyEvent,
} from '@/api/chat'
import { messageOf } from '@/api/client'
import type { Kind } from '@/api/documents'
import { getLlmStatus, type LlmStatus } from '@/api/health'

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
  plan: Plan | null
  retrieval: RetrievalEvent[]
  stages: Record<string, StageEvent>
  notices: string[]
}

export interface ChatOptions {
  strategy: Strategy | null
  hydeMode: HydeMode | null
  documentIds: number[]
  kinds: Kind[]
  rerank: boolean
  llm: boolean
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
    hydeMode: null,
    documentIds: [],
    kinds: [],
    rerank: true,
    llm: true,
  })
  /** Which LLM would answer now (GET /api/llm); null until known or when unavailable. */
  const llm = ref<LlmStatus | null>(null)
  let controller: AbortController | null = null

  const lastAnswer = computed(() =>
    [...messages.value].reverse().find((m) => m.role === 'assistant'),
  )
  /** The sources of the latest answer, for the sources panel. */
  const sources = computed<Source[]>(() => lastAnswer.value?.sources ?? [])
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
      message: text,
      conversation_id: conversationId.value,
      strategy: options.strategy,
      hyde_mode: options.hydeMode,
      document_ids: options.documentIds,
      kinds: options.kinds,
      rerank: options.rerank,
      llm: options.llm,
    }
    try {
      await api.streamChat(request, (ev) => apply(ev, asked, live), controller.signal)
    } catch (err) {
      if (err instanceof DOMException && err.name === 'AbortError') {
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
        conversationId.value = ev.data.conversation_id
        user.id = ev.data.user_message_id
        live.mode = ev.data.mode
        live.model = ev.data.model
        live.notices = [...ev.data.notices]
        p.notices.push(...ev.data.notices)
        p.phase = 'planning'
        if (!title.value) title.value = ev.data.question.slice(0, 80)
        break
      case 'plan':
        live.plan = ev.data
        p.plan = ev.data
        p.phase = 'retrieving'
        break
      case 'retrieval':
        p.retrieval.push(ev.data)
        p.notices.push(...ev.data.notices.filter((n) => !p.notices.includes(n)))
        p.phase = 'answering'
        break
      case 'stage':
        p.stages[ev.data.stage] = ev.data
        p.phase = ev.data.stage === 'verify' ? 'verifying' : 'answering'
        break
      case 'sources':
        live.sources = ev.data.sources
        break
      case 'token':
        live.content += ev.data.text
        p.phase = 'answering'
        break
      case 'verify':
        live.verify = ev.data as VerifyEvent
        break
      case 'done':
        live.id = ev.data.message_id
        live.content = ev.data.answer
        live.citations = ev.data.citations
        live.mode = ev.data.mode
        live.model = ev.data.model
        live.timings_ms = ev.data.timings_ms
        live.status = 'complete'
        conversationId.value = ev.data.conversation_id
        break
      case 'error':
        live.id = ev.data.message_id
        live.status = live.content ? 'interrupted' : 'error'
        live.error = ev.data.message
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
    sources,
    mode,
    llm,
    loadLlm,
    loadConversations,
    open,
    ask,
    stop,
    rate,
    remove,
  }
})
