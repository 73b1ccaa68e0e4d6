// Who is signed in (GET /api/me), read once when the app starts. A server without the route,
// or an answer that cannot be read, counts as the one-person Quire: nothing new is shown.
import { defineStore } from 'pinia'
import { computed, ref } from 'vue'

import { setApiToken } from '@/api/auth'
import { getMe, type Me } from '@/api/me'
import { reloadPage } from '@/composables/reload'

export const useMeStore = defineStore('me', () => {
  const me = ref<Me | null>(null)
  const loaded = ref(false)

  /** A team library (mode "people"). */
  const people = computed(() => me.value?.mode === 'people')
  /** The person signed in, in a team library; null otherwise. */
  const user = computed(() => (people.value ? (me.value?.user ?? null) : null))

  let loading: Promise<void> | null = null

  /** Read /api/me; every later call shares the first one's answer. */
  function load(): Promise<void> {
    loading ??= (async () => {
      try {
        me.value = await getMe()
      } catch {
        // 404 from a server before the team library, or 401 (the token prompt takes over).
        me.value = null
      } finally {
        loaded.value = true
      }
    })()
    return loading
  }

  /** Forget this browser's token and load the page again: the app then asks for a token. */
  function signOut(): void {
    setApiToken(null)
    reloadPage()
  }

  return { me, loaded, people, user, load, signOut }
})
