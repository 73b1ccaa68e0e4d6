import { afterEach, describe, expect, it, vi } from 'vitest'

import { errorJson, fetchRoutes, json } from '@/__tests__/fixtures'
import { setApiToken, tokenRequired } from '../auth'
import { getMe } from '../me'

afterEach(() => {
  vi.unstubAllGlobals()
  setApiToken(null)
  tokenRequired.value = false
})

describe('getMe', () => {
  it('reads the person of a team library, sending the token', async () => {
    setApiToken('alice-token')
    let auth: string | null = null
    vi.stubGlobal(
      'fetch',
      fetchRoutes({
        'GET /api/me': (req) => {
          auth = req.headers.get('Authorization')
          return json({ mode: 'people', user: { id: 7, name: 'alice', admin: true } })
        },
      }),
    )
    expect(await getMe()).toEqual({ mode: 'people', user: { id: 7, name: 'alice', admin: true } })
    expect(auth).toBe('Bearer alice-token')
  })

  it('reads the one-person Quire as single mode with no user', async () => {
    vi.stubGlobal(
      'fetch',
      fetchRoutes({ 'GET /api/me': () => json({ mode: 'single', user: null }) }),
    )
    expect(await getMe()).toEqual({ mode: 'single', user: null })
  })

  it('rejects as the API refused, asking for the token on a 401', async () => {
    vi.stubGlobal('fetch', async () => errorJson(401, 'unauthorized', 'a token is required'))
    await expect(getMe()).rejects.toMatchObject({ status: 401, code: 'unauthorized' })
    expect(tokenRequired.value).toBe(true)
  })
})
