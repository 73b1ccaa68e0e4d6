// GET /api/library/sources: documents by origin, the watched folders, the last import of each
// export or Zotero library, and the Zotero collections and tags (the search filters).
import { bodyOf, client, type Schemas } from './client'

export type SourcesOut = Schemas['SourcesOut']
export type SourceRun = Schemas['SourceRun']
export type WatchedFolder = Schemas['WatchedFolder']
export type OriginCount = Schemas['OriginCount']
export type FacetCount = Schemas['FacetCount']
/** Where a document came from: upload, folder, chatgpt, claude, perplexity, zotero, web. */
export type Origin = Schemas['DocumentOut']['origin']

export function getSources(): Promise<SourcesOut> {
  return bodyOf(client.GET('/api/library/sources'))
}
