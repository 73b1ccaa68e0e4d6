// Language models: the servers found, their chat models and the recommended one; pulling a
// model into Ollama, or the reranker from the Hugging Face Hub, with its progress (SSE);
// choosing the model that writes answers.
import { ApiError, bodyOf, client, type ErrorBody, type Schemas } from './client'
import { readEvents } from './sse'

export type Models = Schemas['ModelsOut']
export type ModelServer = Schemas['ServerOut']
export type ChatModel = Schemas['ChatModelOut']
export type PullProgress = Schemas['PullProgress']
export type ModelChoice = Schemas['ChoiceOut']
export type RerankerStatus = Schemas['RerankerOut']
export type RerankerPullProgress = Schemas['RerankerPullProgress']
export type RerankerPulled = Schemas['RerankerPulled']

export function getModels(): Promise<Models> {
  return bodyOf(client.GET('/api/models'))
}

/**
 * Pull `name` into Ollama; `onProgress` sees each progress event. Resolves when Ollama says the
 * model is installed; rejects with an ApiError when the pull cannot start (no Ollama, a bad
 * name), fails (an unknown model, the server gone mid-pull) or the stream is cut.
 */
export async function pullModel(
  name: string,
  onProgress: (p: PullProgress) => void,
  signal?: AbortSignal,
): Promise<void> {
  const stream = await bodyOf(
    client.POST('/api/models/pull', {
      body: { name },
      parseAs: 'stream',
      headers: { Accept: 'text/event-stream' },
      signal,
    }),
  )
  await follow<PullProgress>(stream, onProgress)
}

/**
 * Download the reranker (the cross-encoder) and load it; `onProgress` sees each step. Resolves
 * with what was installed once search reranks with it; rejects with an ApiError when a download
 * runs already (409), or it fails (the hub unreachable, no such repo, a full disk …).
 */
export async function pullReranker(
  onProgress: (p: RerankerPullProgress) => void,
  signal?: AbortSignal,
): Promise<RerankerPulled> {
  const stream = await bodyOf(
    client.POST('/api/models/reranker/pull', {
      parseAs: 'stream',
      headers: { Accept: 'text/event-stream' },
      signal,
    }),
  )
  return follow<RerankerPullProgress, RerankerPulled>(stream, onProgress)
}

/** A pull's events: each `progress` to `onProgress`, then the data of `done`, or the error. */
async function follow<P, D = unknown>(
  stream: ReadableStream<Uint8Array>,
  onProgress: (p: P) => void,
): Promise<D> {
  for await (const msg of readEvents(stream)) {
    if (msg.event === 'progress') onProgress(JSON.parse(msg.data) as P)
    else if (msg.event === 'done') return JSON.parse(msg.data) as D
    else if (msg.event === 'error') throw new ApiError(JSON.parse(msg.data) as ErrorBody)
  }
  throw new ApiError({
    status: 0,
    code: 'stream_cut',
    message: 'the pull stopped before it finished; the server may have restarted',
  })
}

export function useModel(name: string, url?: string): Promise<ModelChoice> {
  return bodyOf(client.PUT('/api/models/use', { body: { name, url: url ?? null } }))
}

export async function forgetModel(): Promise<void> {
  await client.DELETE('/api/models/use')
}
