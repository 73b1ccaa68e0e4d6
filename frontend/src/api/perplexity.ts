import { request, type Schemas } from './client'

export type PerplexityStatus = Schemas['PerplexityStatusOut']
export type SyncCounts = Schemas['CountsOut']
export type SyncRun = Schemas['RunOut']

/** The last sync, the running one and the saved login; `verify` checks the login live (slow). */
export function getPerplexityStatus(verify = false): Promise<PerplexityStatus> {
  return request<PerplexityStatus>(`/api/perplexity/status${verify ? '?verify=true' : ''}`)
}

/** Start a sync in the background; 409 while one runs or without a saved login. */
export function startPerplexitySync(): Promise<PerplexityStatus> {
  return request<PerplexityStatus>('/api/perplexity/sync', { method: 'POST' })
}
