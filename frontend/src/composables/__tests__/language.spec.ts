import { describe, expect, it } from 'vitest'

import { localName } from '@/__tests__/fixtures'
import { languageName } from '../language'

describe('languageName', () => {
  it("names a tag in the browser's language, scripts included", () => {
    for (const tag of ['fr', 'ja', 'zh-Hans', 'zh-Hant', 'ar']) {
      expect(languageName(tag)).toBe(localName(tag))
      expect(languageName(tag)).not.toBe(tag)
    }
  })

  it("falls back to the server's name, then the tag, for what it cannot name", () => {
    expect(languageName('qaa', 'Private')).toBe('Private')
    expect(languageName('qaa')).toBe('qaa')
    expect(languageName('not a tag!', 'Odd')).toBe('Odd')
    expect(languageName('not a tag!')).toBe('not a tag!')
  })
})
