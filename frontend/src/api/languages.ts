// GET /api/library/languages: the languages the library holds and whether the embedder covers them.
import { bodyOf, client, type Schemas } from './client'

export type LanguagesOut = Schemas['LanguagesOut']
export type LibraryLanguage = Schemas['LibraryLanguage']

export function getLanguages(): Promise<LanguagesOut> {
  return bodyOf(client.GET('/api/library/languages'))
}
