import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'

import ChatProgress from '../ChatProgress.vue'

describe('ChatProgress', () => {
  it('shows the plan, the retrieval counts and the LLM stages while they run', () => {
    const w = mount(ChatProgress, {
      props: {
        progress: {
          phase: 'answering',
          plan: {
            event: 'plan',
            strategy: 'exhaustive',
            queries: ['tides', 'moon'],
            hard_keywords: ['512(k)'],
            hyde_passage: null,
            source: 'llm',
          },
          retrieval: [
            {
              event: 'retrieval',
              counts: { bm25: 40, dense: 40 },
              timings_ms: { total: 1234 },
              notices: [],
              hyde_used: true,
              rerank: null,
              candidates: 80,
              strategy: 'exhaustive',
              round: 1,
            },
          ],
          stages: { map: { event: 'stage', stage: 'map', done: 3, total: 8 } },
          notices: ['no reranker model installed'],
        },
      },
    })
    const text = w.text()
    expect(text).toContain('Writing the answer…')
    expect(text).toContain('exhaustive')
    expect(text).toContain('tides | moon')
    expect(text).toContain('512(k)')
    expect(text).toContain('Round 1: 80 candidates')
    expect(text).toContain('bm25 40, dense 40')
    expect(text).toContain('1.2 s')
    expect(text).toContain('HyDE')
    expect(text).toContain('Reading sources 3/8')
    const bar = w.get('progress').element as HTMLProgressElement
    expect([bar.value, bar.max]).toEqual([3, 8])
    expect(text).toContain('no reranker model installed')
  })
})
