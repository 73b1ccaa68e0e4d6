import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'

import type { RerankerStatus } from '@/api/models'
import SettingsReranker from '../SettingsReranker.vue'

const status = (over: Partial<RerankerStatus> = {}): RerankerStatus => ({
  installed: false,
  loaded: false,
  pulling: false,
  path: '/data/models/cross-encoder/ms-marco-MiniLM-L-6-v2',
  command: 'quire models pull reranker',
  ...over,
})

const event = (e: string, d: unknown): string => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`

const PULLED = {
  repo: 'cross-encoder/ms-marco-MiniLM-L-6-v2',
  commit: 'c5ee24cb16019beea0893ab7796b1df96625c6b8',
  source: 'int8 ONNX as published',
  size: 23_000_000,
  path: '/data/models/cross-encoder/ms-marco-MiniLM-L-6-v2/onnx/model_quint8_avx2.onnx',
  up_to_date: false,
  notes: [],
  loaded: true,
}

/** The pull route: its stream is written by the test (`send`, then `end`). */
function serve(): { send: (text: string) => void; end: () => void; calls: string[] } {
  const encoder = new TextEncoder()
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
  const calls: string[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (req: Request) => {
      calls.push(`${req.method} ${new URL(req.url).pathname}`)
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    }),
  )
  return {
    send: (text) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
    calls,
  }
}

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('SettingsReranker', () => {
  it('downloads with a bar per step, then says search reranks with it', async () => {
    const server = serve()
    const w = mount(SettingsReranker, { props: { status: status() } })
    expect(w.get('[data-testid="reranker-status"]').text()).toBe('not installed')
    expect(w.text()).toContain('quire models pull reranker')
    const button = w.get('[data-testid="reranker-pull"]')
    expect(button.text()).toBe('Download reranker')
    await button.trigger('click')
    await flushPromises()
    expect(server.calls).toEqual(['POST /api/models/reranker/pull'])
    expect(w.get('[data-testid="reranker-pull"]').attributes('disabled')).toBeDefined()
    expect(w.get('[data-testid="reranker-pull-status"]').text()).toBe('Starting…')

    const step = 'download onnx/model_quint8_avx2.onnx'
    server.send(
      event('progress', {
        step,
        completed: 11_500_000,
        total: 23_000_000,
        fraction: 0.5,
        done: false,
      }),
    )
    await vi.waitFor(() =>
      expect(w.get('[data-testid="reranker-pull-status"]').text()).toContain('50%'),
    )
    const text = w.get('[data-testid="reranker-pull-status"]').text().replace(/\s+/g, ' ')
    expect(text).toBe(`${step}: 50% · 11 MB of 22 MB`)
    const bar = w.get('[data-testid="reranker-progress"]').element as HTMLProgressElement
    expect(bar.value).toBe(0.5)

    const check = 'check: load and score a pair'
    server.send(event('progress', { step: check, completed: 0, total: null, fraction: null }))
    await vi.waitFor(() =>
      expect(w.get('[data-testid="reranker-pull-status"]').text()).toBe(`${check}…`),
    )
    server.send(event('done', PULLED))
    server.end()
    await vi.waitFor(() => expect(w.find('[data-testid="reranker-pull-done"]').exists()).toBe(true))
    expect(w.get('[data-testid="reranker-pull-done"]').text().replace(/\s+/g, ' ')).toBe(
      '✓ Reranker installed (int8 ONNX as published, 22 MB); search reranks with it now.',
    )
    expect(w.find('[data-testid="reranker-progress"]').exists()).toBe(false)
    expect(w.emitted('changed')).toHaveLength(1)
  })

  it('says a failed download plainly, and nothing changed', async () => {
    const server = serve()
    const w = mount(SettingsReranker, { props: { status: status() } })
    await w.get('[data-testid="reranker-pull"]').trigger('click')
    const message =
      'cannot list the files of cross-encoder/ms-marco-MiniLM-L-6-v2@main from ' +
      'https://huggingface.co (connection refused); check the network, HTTPS_PROXY, or ' +
      'HF_ENDPOINT for a mirror.'
    server.send(event('error', { status: 503, code: 'hub_unreachable', message }))
    server.end()
    await vi.waitFor(() =>
      expect(w.find('[data-testid="reranker-pull-error"]').exists()).toBe(true),
    )
    const error = w.get('[data-testid="reranker-pull-error"]')
    expect(error.attributes('role')).toBe('alert')
    expect(error.text()).toBe(`The reranker was not downloaded: ${message}`)
    expect(w.emitted('changed')).toBeUndefined()
    expect(w.get('[data-testid="reranker-pull"]').attributes('disabled')).toBeUndefined()
  })

  it('offers Load, Update, or waits for a download running elsewhere', async () => {
    const w = mount(SettingsReranker, { props: { status: status({ installed: true }) } })
    expect(w.get('[data-testid="reranker-status"]').text()).toBe('installed, not loaded')
    expect(w.get('[data-testid="reranker-pull"]').text()).toBe('Load reranker')
    await w.setProps({ status: status({ installed: true, loaded: true }) })
    expect(w.get('[data-testid="reranker-status"]').text()).toBe('loaded')
    expect(w.get('[data-testid="reranker-pull"]').text()).toBe('Update reranker')
    await w.setProps({ status: status({ pulling: true }) })
    const button = w.get('[data-testid="reranker-pull"]')
    expect(button.attributes('disabled')).toBeDefined()
    expect(button.text()).toBe('Downloading…')
    expect(w.get('[data-testid="reranker-pull-status"]').text()).toContain('another tab')
  })
})
