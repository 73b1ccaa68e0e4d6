import { bodyOf, client, type Schemas } from './client'

export type PerplexityStatus = Schemas['PerplexityStatusOut']
export type SyncCounts = Schemas['CountsOut']
export type SyncRun = Schemas['RunOut']

/** The last sync, the running one and the saved login; `verify` checks the login live (slow). */
export function getPerplexityStatus(verify = false): Promise<PerplexityStatus> {
  return bodyOf(
    client.GET('/api/perplexity/status', { params: { query: verify ? { verify } : {} } }),
  )
}

/** Start a sync in the background; 409 while one runs or without a saved login. */
export function startPerplexitySync(): Promise<PerplexityStatus> {
  return bodyOf(client.POST('/api/perplexity/sync'))
}
