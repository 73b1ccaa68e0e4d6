// GET /api/me: whether this Quire has people, and who this browser's token signs in as.
import { bodyOf, client, type Schemas } from './client'

export type Me = Schemas['MeOut']
export type MeUser = Schemas['MeUser']

export function getMe(): Promise<Me> {
  return bodyOf(client.GET('/api/me'))
}
