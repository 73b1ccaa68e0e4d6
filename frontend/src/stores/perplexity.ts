// Perplexity sync: the status the server reports, read again every 2 s while a sync runs.
import { defineStore } from 'pinia'
import { computed, ref } from 'vue'

import { messageOf } from '@/api/client'
import * as api from '@/api/perplexity'
import type { PerplexityStatus } from '@/api/perplexity'

export const POLL_MS = 2000
/** Polls of one run before giving up: an hour, about 3,500 threads at the default 1 s delay. */
export const MAX_POLLS = 1800

export const usePerplexityStore = defineStore('perplexity', () => {
  const status = ref<PerplexityStatus | null>(null)
  const loaded = ref(false)
  /** The status could not be read. */
  const error = ref<string | null>(null)
  /** The sync could not start (409: one is running, or no login is saved). */
  const syncError = ref<string | null>(null)
  const starting = ref(false)
  const verifying = ref(false)
  /** A run outlasted MAX_POLLS: the page stopped reading its progress. */
  const stalled = ref(false)

  const running = computed(() => status.value?.running ?? false)
  const canSync = computed(() => loaded.value && !running.value && !starting.value)

  let following = false
  let polls = 0
  let timer: ReturnType<typeof setTimeout> | null = null
  // Responses can overtake each other (a slow ?verify=true, a poll): the newest request wins.
  let latest = 0

  function cancelTimer(): void {
    if (timer !== null) clearTimeout(timer)
    timer = null
  }

  function schedule(): void {
    cancelTimer()
    if (!following || !running.value) return
    if (polls >= MAX_POLLS) {
      stalled.value = true
      return
    }
    timer = setTimeout(() => {
      timer = null
      polls += 1
      void load()
    }, POLL_MS)
  }

  function restartPolling(): void {
    polls = 0
    stalled.value = false
  }

  async function load(verify = false): Promise<void> {
    const seq = ++latest
    try {
      const fresh = await api.getPerplexityStatus(verify)
      if (seq !== latest) return
      status.value = fresh
      error.value = null
    } catch (err) {
      if (seq !== latest) return
      error.value = messageOf(err)
    } finally {
      loaded.value = true
      if (seq === latest) schedule()
    }
  }

  /** Read the status now (and follow a running sync again if polling gave up). */
  function refresh(): Promise<void> {
    restartPolling()
    return load()
  }

  /** Check the saved login live: the server opens a headless browser, a few seconds. */
  async function verify(): Promise<void> {
    verifying.value = true
    restartPolling()
    try {
      await load(true)
    } finally {
      verifying.value = false
    }
  }

  async function sync(): Promise<void> {
    if (!canSync.value) return
    starting.value = true
    syncError.value = null
    try {
      const fresh = await api.startPerplexitySync()
      latest += 1 // a poll still in flight is older than this
      status.value = fresh
      restartPolling()
      schedule()
    } catch (err) {
      syncError.value = messageOf(err)
      await refresh() // a 409 may be a sync started elsewhere (the CLI): follow it
    } finally {
      starting.value = false
    }
  }

  /** Start reading the status, and keep reading it while a sync runs (a view's onMounted). */
  function follow(): Promise<void> {
    following = true
    return refresh()
  }

  /** Stop polling (a view's onBeforeUnmount). */
  function unfollow(): void {
    following = false
    cancelTimer()
  }

  return {
    status,
    loaded,
    error,
    syncError,
    starting,
    verifying,
    stalled,
    running,
    canSync,
    refresh,
    verify,
    sync,
    follow,
    unfollow,
  }
})
