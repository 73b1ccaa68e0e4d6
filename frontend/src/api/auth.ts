// The API token (QUIRE_API_TOKEN), when the server asks for one: kept in this browser's
// localStorage and sent as `Authorization: Bearer …` on every API request.
import { ref } from 'vue'

const KEY = 'quire.apiToken'

function read(): string | null {
  try {
    return localStorage.getItem(KEY)
  } catch {
    return null
  }
}

export const apiToken = ref<string | null>(read())
/** Set when the API answered 401: the app asks for the token. */
export const tokenRequired = ref(false)

export function setApiToken(value: string | null): void {
  const token = value?.trim() || null
  apiToken.value = token
  tokenRequired.value = false
  try {
    if (token) localStorage.setItem(KEY, token)
    else localStorage.removeItem(KEY)
  } catch {
    // private mode: the token lasts for this page only
  }
}

export function authHeaders(): Record<string, string> {
  return apiToken.value ? { Authorization: `Bearer ${apiToken.value}` } : {}
}
