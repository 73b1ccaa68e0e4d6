import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'

import type { Models } from '@/api/models'
import SettingsModels from '../SettingsModels.vue'

function models(over: Partial<Models> = {}): Models {
  return {
    servers: [
      {
        backend: 'ollama',
        url: 'http://127.0.0.1:11434',
        ok: true,
        error: null,
        version: '0.12.3',
        can_pull: true,
        models: [
          {
            name: 'llama3.2:1b',
            size: 1_300_000_000,
            parameter_size: '1.2B',
            family: 'llama',
            quantization: 'Q8_0',
            in_use: true,
          },
        ],
        embedding_only: ['nomic-embed-text:latest'],
      },
    ],
    recommendation: {
      name: 'llama3.2:3b',
      reason: 'a 3B model suits this machine.',
      installed: false,
      memory_bytes: 8 << 30,
      download: '2.0 GB',
    },
    in_use: 'ollama:llama3.2:1b',
    choice: null,
    llm_enabled: true,
    install: { linux: 'curl … | sh', macos: 'brew install ollama', windows: 'winget install x' },
    reranker: {
      installed: false,
      loaded: false,
      pulling: false,
      path: '/m',
      command: 'quire models pull reranker',
    },
    ...over,
  }
}

const sse = (events: [string, unknown][]): string =>
  events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('')

/** A server: GET /api/models answers `listed` (one after another), POST pull answers `pull`. */
function serve(listed: Models[], pull: string): ReturnType<typeof vi.fn> {
  let n = 0
  const fetch = vi.fn(async (req: Request) => {
    const path = new URL(req.url).pathname
    if (path === '/api/models/pull')
      return new Response(pull, { headers: { 'content-type': 'text/event-stream' } })
    if (path === '/api/models/use')
      return Response.json({ backend: 'ollama', url: 'http://127.0.0.1:11434', model: 'x' })
    return Response.json(listed[Math.min(n++, listed.length - 1)])
  })
  vi.stubGlobal('fetch', fetch)
  return fetch
}

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('SettingsModels', () => {
  it('lists the chat models, the one in use and the recommendation', async () => {
    serve([models()], '')
    const w = mount(SettingsModels)
    await flushPromises()
    expect(w.get('[data-testid="model-server"]').text()).toContain('Ollama 0.12.3 at')
    const row = w.get('[data-testid="model-row"]')
    expect(row.text()).toContain('llama3.2:1b')
    expect(row.text()).toContain('answers now')
    expect(w.get('[data-testid="recommendation"]').text()).toContain('llama3.2:3b')
    expect(w.get('[data-testid="recommendation"] button').text()).toBe('Pull llama3.2:3b')
    expect(w.get('[data-testid="reranker-setup"]').text()).toContain('quire models pull reranker')
  })

  it('follows a reranker download started in another tab until it ends', async () => {
    vi.useFakeTimers()
    try {
      const base = models().reranker
      serve(
        [
          models({ reranker: { ...base, pulling: true } }),
          models({ reranker: { ...base, installed: true, loaded: true } }),
        ],
        '',
      )
      const w = mount(SettingsModels)
      await flushPromises()
      const button = () => w.get('[data-testid="reranker-pull"]')
      expect(button().attributes('disabled')).toBeDefined()
      await vi.advanceTimersByTimeAsync(2000)
      await flushPromises()
      expect(w.get('[data-testid="reranker-status"]').text()).toBe('loaded')
      expect(button().text()).toBe('Update reranker')
      expect(button().attributes('disabled')).toBeUndefined()
    } finally {
      vi.useRealTimers()
    }
  })

  it('says how to install Ollama when no server answers', async () => {
    const down = models().servers.map((s) => ({ ...s, ok: false, models: [] }))
    serve([models({ servers: down })], '')
    const w = mount(SettingsModels)
    await flushPromises()
    const none = w.get('[data-testid="no-server"]')
    expect(none.text()).toContain('No model server is running here')
    expect(none.text()).toContain('winget install x')
    expect(none.text()).toContain('ollama serve')
    expect(w.find('[data-testid="recommendation"] button').exists()).toBe(false)
  })

  it('pulls, then says the model is installed', async () => {
    const after = models()
    after.servers[0]!.models.push({ ...after.servers[0]!.models[0]!, name: 'llama3.2:3b' })
    const progress = { status: 'pulling', completed: 5, total: 10, fraction: 0.5 }
    const fetch = serve(
      [models(), after],
      sse([
        ['progress', progress],
        ['done', { name: 'llama3.2:3b', url: 'x' }],
      ]),
    )
    const w = mount(SettingsModels)
    await flushPromises()
    await w.get('[data-testid="recommendation"] button').trigger('click')
    await flushPromises()
    const pull = fetch.mock.calls.find(([r]) => (r as Request).url.endsWith('/api/models/pull'))!
    expect(await (pull[0] as Request).json()).toEqual({ name: 'llama3.2:3b' })
    expect(w.get('[data-testid="pull-done"]').text()).toContain('llama3.2:3b is installed')
    expect(w.emitted('changed')).toHaveLength(1)
  })

  it('shows a failed pull plainly', async () => {
    const error = { status: 404, code: 'model_not_in_library', message: 'no such model' }
    serve([models()], sse([['error', error]]))
    const w = mount(SettingsModels)
    await flushPromises()
    await w.get('#pull-name').setValue('nope:1b')
    await w.get('form').trigger('submit')
    await flushPromises()
    expect(w.get('[data-testid="pull-error"]').text()).toBe('nope:1b was not pulled: no such model')
    expect(w.find('[data-testid="pull-done"]').exists()).toBe(false)
  })
})
