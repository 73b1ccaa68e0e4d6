import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'

import AppCodeText from '../AppCodeText.vue'

describe('AppCodeText', () => {
  it('shows backticked commands as code', () => {
    const w = mount(AppCodeText, { props: { text: 'run `quire perplexity login` on the server' } })
    expect(w.text()).toBe('run quire perplexity login on the server')
    expect(w.findAll('code').map((c) => c.text())).toEqual(['quire perplexity login'])
  })

  it('keeps an unpaired backtick as text', () => {
    const w = mount(AppCodeText, { props: { text: 'a `b` c `d' } })
    expect(w.text()).toBe('a b c `d')
    expect(w.findAll('code').map((c) => c.text())).toEqual(['b'])
  })
})
