import { bodyOf, client } from './client'
import type { Job } from './documents'
import { readEvents } from './sse'

const byId = (job_id: number) => ({ params: { path: { job_id } } })

export function getJob(id: number): Promise<Job> {
  return bodyOf(client.GET('/api/jobs/{job_id}', byId(id)))
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
      const stream = await bodyOf(
        client.GET('/api/jobs/{job_id}/events', {
          ...byId(id),
          parseAs: 'stream',
          headers: { Accept: 'text/event-stream' },
          signal: controller.signal,
        }),
      )
      for await (const msg of readEvents(stream)) {
        if (msg.event !== 'progress' && msg.event !== 'done' && msg.event !== 'failed') continue
        const job: Job = JSON.parse(msg.data)
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
