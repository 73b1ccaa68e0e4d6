import { describe, expect, it } from 'vitest'

import { textFragment } from '@/composables/textFragment'

const PAGE = 'https://sre.google/sre-book/monitoring-distributed-systems/'

// The same cases as tests/synthesis/test_web_citations.py: the web app and the API agree.
describe('textFragment', () => {
  it('encodes a short passage whole, commas and spaces percent-encoded', () => {
    expect(textFragment(`${PAGE}#top`, 'latency, traffic, errors, and saturation')).toBe(
      `${PAGE}#:~:text=latency%2C%20traffic%2C%20errors%2C%20and%20saturation`,
    )
  })

  it('never leaves the directive syntax characters bare', () => {
    expect(textFragment(PAGE, 'Black-Box Versus White-Box & more')).toBe(
      `${PAGE}#:~:text=Black%2DBox%20Versus%20White%2DBox%20%26%20more`,
    )
  })

  it('names a long passage by its first and last five words', () => {
    const long =
      'If you can only measure four metrics of your user-facing system, focus on these four.'
    expect(textFragment(PAGE, long)).toBe(
      `${PAGE}#:~:text=If%20you%20can%20only%20measure,system%2C%20focus%20on%20these%20four.`,
    )
  })

  it('cuts text written without spaces by characters', () => {
    const zh =
      '一波波接續性低溫寒流報到已將新竹尖石鄉後山一帶層層山巒披上嫣紅的彩衣玉峰道路一路上雲氣山嵐'
    const link = textFragment(PAGE, zh)
    const [start, end] = link.split('#:~:text=')[1]!.split(',').map(decodeURIComponent)
    expect([start, end]).toEqual(['一波波接續性低溫寒流報到', '衣玉峰道路一路上雲氣山嵐'])
  })

  it('leaves the address alone without a passage', () => {
    expect(textFragment(PAGE, ' \n')).toBe(PAGE)
  })
})
