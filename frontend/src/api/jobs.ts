import { authHeaders } from './auth'
import { errorFrom, request } from './client'
import type { Job } from './documents'
import { readEvents } from './sse'

export function getJob(id: number): Promise<Job> {
  return request<Job>(`/api/jobs/${id}`)
}

const finished = (job: Job) => job.status === 'done' || job.status === 'failed'

/**
 * Follow a job until it is done or failed: its SSE stream (`GET /api/jobs/{id}/events`, read
 * with fetch so the API token can be sent, which EventSource cannot), else polling
 * `GET /api/jobs/{id}` (a proxy that drops the stream, the stream's own time limit).
 * Returns a function that stops watching.
 */
export function watchJob(id: number, onUpdate: (job: Job) => void, pollMs = 1000): () => void {
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | null = null
  const controller = new AbortController()

  const stop = () => {
    stopped = true
    controller.abort()
    if (timer !== null) clearTimeout(timer)
  }

  const poll = async () => {
    if (stopped) return
    try {
      const job = await getJob(id)
      if (stopped) return
      onUpdate(job)
      if (finished(job)) return stop()
    } catch {
      // a transient failure: try again on the next tick
    }
    timer = setTimeout(poll, pollMs)
  }

  const follow = async () => {
    try {
      const resp = await fetch(`/api/jobs/${id}/events`, {
        headers: { ...authHeaders(), Accept: 'text/event-stream' },
        signal: controller.signal,
      })
      if (!resp.ok || !resp.body) throw errorFrom(resp.status, await resp.text())
      for await (const msg of readEvents(resp.body)) {
        if (msg.event !== 'progress' && msg.event !== 'done' && msg.event !== 'failed') continue
        const job = JSON.parse(msg.data) as Job
        onUpdate(job)
        if (finished(job)) return stop()
      }
    } catch {
      // the stream failed or was cut: polling takes over below
    }
    if (!stopped) void poll()
  }

  void follow()
  return stop
}
