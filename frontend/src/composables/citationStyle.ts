// The citation style the reader chose for "Export as Markdown" (Settings), remembered in
// localStorage; `quire` (Quire's own) until one is chosen.
import { ref, watch } from 'vue'

const KEY = 'quire.citationStyle'
export const DEFAULT_STYLE = 'quire'

function read(): string {
  try {
    return localStorage.getItem(KEY) || DEFAULT_STYLE
  } catch {
    return DEFAULT_STYLE
  }
}

export const citationStyle = ref(read())

watch(citationStyle, (name) => {
  try {
    if (name === DEFAULT_STYLE) localStorage.removeItem(KEY)
    else localStorage.setItem(KEY, name)
  } catch {
    // private mode: the choice lasts for this page only
  }
})
