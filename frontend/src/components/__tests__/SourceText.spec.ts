import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'

import SourceText from '../SourceText.vue'

describe('SourceText', () => {
  it('marks the passage, quote and query matches', () => {
    const w = mount(SourceText, {
      props: {
        text: 'before PASSAGE with QUOTE inside after',
        ranges: [
          { start: 7, end: 32, kind: 'passage' },
          { start: 20, end: 25, kind: 'quote' },
        ],
      },
    })
    expect(w.findAll('mark').map((m) => [m.element.textContent, m.classes().join(' ')])).toEqual([
      ['PASSAGE with ', 'passage'],
      ['QUOTE', 'passage quote'],
      [' inside', 'passage'],
    ])
    expect(w.text()).toBe('before PASSAGE with QUOTE inside after')
  })

  it('shows markup inside a document as text, never as elements', () => {
    const text =
      'A page says <script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=2">.'
    const w = mount(SourceText, {
      props: { text, ranges: [{ start: 0, end: 40, kind: 'passage' }] },
    })
    expect(w.element.querySelector('script, img')).toBeNull()
    expect(w.element.textContent).toBe(text)
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined()
  })
})
