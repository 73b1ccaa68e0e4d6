// Shared test data and helpers: SSE bodies, JSON responses, chat events, sources, documents.
import type {
  ChatEvent,
  ChatRequest,
  CitationCheck,
  DoneEvent,
  Message,
  Source,
  StartEvent,
} from '@/api/chat'
import type { Document, Job, Page } from '@/api/documents'
import type { LanguagesOut, LibraryLanguage } from '@/api/languages'
import type { PerplexityStatus, SyncCounts, SyncRun } from '@/api/perplexity'
import type { SourceRun, SourcesOut, WatchedFolder } from '@/api/sources'

export function sse(events: [string, unknown][], extra = ''): string {
  return events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('') + extra
}

/** A chat answer's stream as the API sends it: each event named, and its data naming it too. */
export function chatSse(events: ChatEvent[], extra = ''): string {
  return sse(
    events.map((e) => [e.event, e]),
    extra,
  )
}

/** A Response whose body arrives in the given pieces (split anywhere, even inside a character). */
export function streamResponse(pieces: (string | Uint8Array)[], status = 200): Response {
  const enc = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of pieces) controller.enqueue(typeof p === 'string' ? enc.encode(p) : p)
      controller.close()
    },
  })
  return new Response(body, { status, headers: { 'Content-Type': 'text/event-stream' } })
}

export function json(body: unknown, status = 200): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  })
}

/** A fetch that fails the way a browser's does when the server cannot be reached. */
export async function offline(): Promise<Response> {
  throw new TypeError('Failed to fetch')
}

export function errorJson(status: number, code: string, message: string): Response {
  return json({ error: { status, code, message, detail: null } }, status)
}

export function source(n: number, over: Partial<Source> = {}): Source {
  return {
    n,
    chunk_id: 100 + n,
    document_id: 3,
    title: 'Moby-Dick',
    kind: 'pdf',
    filename: 'moby.pdf',
    page: 10 + n,
    page_label: null,
    heading_path: 'Chapter 1',
    // As the API names it (records.place): the web app shows it as it comes.
    place: `p. ${10 + n}`,
    section: 'Chapter 1',
    passage: `Passage ${n} about whales and tides.`,
    highlights: [[16, 22]],
    quote: `Passage ${n} about whales`,
    origin_url: null,
    url: `/api/documents/3/file#page=${10 + n}`,
    view: `/api/documents/3/pages/${10 + n}`,
    score: 1.5,
    web_sources: [],
    ...over,
  }
}

export function doc(id: number, over: Partial<Document> = {}): Document {
  return {
    id,
    kind: 'pdf',
    title: `Doc ${id}`,
    author: null,
    filename: `doc${id}.pdf`,
    sha256: 'x'.repeat(64),
    byte_size: 2048,
    page_count: 3,
    chunk_count: 5,
    status: 'ready',
    error: null,
    created_at: '2025-01-02T03:04:05Z',
    updated_at: '2025-01-02T03:04:05Z',
    metadata: {},
    job: null,
    language: null,
    origin: 'upload',
    visibility: 'team',
    owner: null,
    can_change: true,
    ...over,
  }
}

/** A language's name as this machine's locale says it (tests run under any LANG). */
export function localName(tag: string): string {
  return new Intl.DisplayNames(undefined, { type: 'language' }).of(tag)!
}

export function language(tag: string, over: Partial<LibraryLanguage> = {}): LibraryLanguage {
  return { language: tag, name: tag, documents: 1, chunks: 10, covered: true, ...over }
}

/** GET /api/library/languages for an English-only embedder over English documents. */
export function languagesOut(over: Partial<LanguagesOut> = {}): LanguagesOut {
  return {
    embedder: { name: 'all-MiniLM-L6-v2', languages: ['en'], multilingual: false, known: true },
    languages: [language('en', { name: 'English', documents: 3, chunks: 40 })],
    undetected: 0,
    hint: null,
    ...over,
  }
}

export function page(over: Partial<Page> = {}): Page {
  return {
    document_id: 3,
    kind: 'pdf',
    page: 2,
    page_count: 5,
    heading_path: '',
    place: 'p. 2',
    section: '',
    text: 'Intro line.\n\nThe tide rises twice a day near the harbor. Whales follow it.\n\nEnd.',
    source: 'text',
    metadata: {},
    chunks: [
      { id: 7, ordinal: 0, text: 'Intro line.' },
      { id: 8, ordinal: 1, text: 'The tide rises twice a day near the harbor. Whales follow it.' },
    ],
    ...over,
  }
}

/** A request's path and query, as the app wrote it ("/api/chat"): the client sends full URLs. */
export function pathOf(request: Request): string {
  const url = new URL(request.url)
  return url.pathname + url.search
}

/** Route fetch calls (the app always passes a Request) by "METHOD path" to handlers; unknown
 * calls fail the test loudly. */
export function fetchRoutes(
  routes: Record<string, (request: Request) => Response | Promise<Response>>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const key = `${request.method} ${pathOf(request)}`
    const handler = routes[key]
    if (!handler) throw new Error(`unexpected fetch: ${key}`)
    return handler(request)
  }
}

/** A POST /api/chat body with the form's defaults (override anything). */
export function chatRequest(over: Partial<ChatRequest> = {}): ChatRequest {
  return {
    message: 'q',
    conversation_id: null,
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
    ...over,
  }
}

export function startEvent(over: Partial<StartEvent> = {}): StartEvent {
  return {
    event: 'start',
    conversation_id: 4,
    user_message_id: 9,
    question: 'What about tides?',
    standalone_question: 'What about tides?',
    mode: 'extractive',
    model: null,
    notices: [],
    extractive_reason: 'the LLM was switched off for this question.',
    ...over,
  }
}

export function doneEvent(over: Partial<DoneEvent> = {}): DoneEvent {
  return {
    event: 'done',
    message_id: 10,
    conversation_id: 4,
    answer: 'Tides rise twice a day [1].',
    citations: [1],
    mode: 'extractive',
    model: null,
    notices: [],
    extractive_reason: 'the LLM was switched off for this question.',
    timings_ms: {},
    citations_checked: null,
    status: 'complete',
    ...over,
  }
}

/** The citation check of an extractive answer citing ``n`` times (override anything). */
export function citationCheck(n = 1, over: Partial<CitationCheck> = {}): CitationCheck {
  return { checked: n, kept: n, dropped: 0, method: 'verbatim', dropped_citations: [], ...over }
}

/** A stored assistant message (override anything). */
export function storedMessage(over: Partial<Message> = {}): Message {
  return {
    id: 10,
    role: 'assistant',
    content: 'Tides rise twice a day [1].',
    sources: [source(1)],
    citations: [1],
    plan: null,
    timings_ms: null,
    mode: 'extractive',
    model: null,
    status: 'complete',
    verify: null,
    notices: [],
    citations_checked: null,
    created_at: '',
    feedback: null,
    ...over,
  }
}

export function job(over: Partial<Job> = {}): Job {
  return {
    id: 1,
    kind: 'ingest',
    status: 'running',
    stage: 'extract',
    progress: 0,
    attempts: 1,
    detail: {},
    ...over,
  }
}

export function syncCounts(over: Partial<SyncCounts> = {}): SyncCounts {
  return {
    listed: 0,
    changed: 0,
    exported: 0,
    ingested: 0,
    failed: 0,
    unchanged: 0,
    resumed: 0,
    deleted_upstream: 0,
    ...over,
  }
}

/** GET /api/perplexity/status with a valid login and no sync yet (override anything). */
export function pxStatus(over: Partial<PerplexityStatus> = {}): PerplexityStatus {
  return {
    running: false,
    current: null,
    last_run: null,
    login: {
      saved: true,
      saved_at: '2025-01-02T03:04:05+00:00',
      valid: true,
      checked_at: '2025-01-02T03:04:05+00:00',
      expires: null,
      user: 'me@example.org',
    },
    threads: { synced: 0, deleted_upstream: 0 },
    base_url: 'https://www.perplexity.ai',
    ...over,
  }
}

/** A running sync that has visited `changed` of `total` threads. */
export function pxRunning(total = 10, changed = 3): PerplexityStatus {
  return pxStatus({
    running: true,
    current: {
      started_at: '2025-01-02T03:04:05+00:00',
      total,
      thread: 'Why is the sky blue',
      counts: syncCounts({ listed: total, changed, exported: changed, ingested: changed }),
    },
  })
}

export function pxRun(over: Partial<SyncRun> = {}): SyncRun {
  return {
    started_at: '2025-01-02T03:00:00+00:00',
    finished_at: '2025-01-02T03:01:15+00:00',
    outcome: 'ok',
    message: '',
    counts: syncCounts({ listed: 12, changed: 4, exported: 4, ingested: 4, unchanged: 8 }),
    errors: [],
    resumed: false,
    limit: null,
    seconds: 75,
    requests: 20,
    ...over,
  }
}

/** One import or watched-folder pass, finished without error (override anything). */
export function sourceRun(over: Partial<SourceRun> = {}): SourceRun {
  return {
    source: 'chatgpt',
    location: '/home/me/chatgpt-export.zip',
    started_at: '2025-01-02T03:00:00Z',
    finished_at: '2025-01-02T03:01:00Z',
    ok: true,
    summary: { conversations: 12, new: 10, updated: 0, unchanged: 2, skipped: 0 },
    error: null,
    ...over,
  }
}

export function watchedFolder(path: string, over: Partial<WatchedFolder> = {}): WatchedFolder {
  return {
    path,
    configured: true,
    exists: true,
    documents: 3,
    removed: 0,
    last_run: null,
    ...over,
  }
}

/** GET /api/library/sources for a library of uploads only, with no folder or import. */
export function sourcesOut(over: Partial<SourcesOut> = {}): SourcesOut {
  return {
    origins: [{ origin: 'upload', documents: 3, chunks: 40 }],
    watched_folders: [],
    imports: [],
    collections: [],
    tags: [],
    ...over,
  }
}
