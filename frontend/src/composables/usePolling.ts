// Call `fn` every `ms` while `active()` is true and the component is mounted.
import { onBeforeUnmount, onMounted, watch, type WatchSource } from 'vue'

export function usePolling(fn: () => unknown, ms: number, active: WatchSource<boolean>): void {
  let timer: ReturnType<typeof setInterval> | null = null
  const stop = () => {
    if (timer !== null) clearInterval(timer)
    timer = null
  }
  const start = () => {
    if (timer === null) timer = setInterval(fn, ms)
  }
  let unwatch: (() => void) | null = null
  onMounted(() => {
    unwatch = watch(active, (on) => (on ? start() : stop()), { immediate: true })
  })
  onBeforeUnmount(() => {
    unwatch?.()
    stop()
  })
}
