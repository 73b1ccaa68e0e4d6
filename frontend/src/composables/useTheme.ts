// Light, dark, or whatever the system prefers; remembered in localStorage.
import { ref, watch } from 'vue'

export type Theme = 'system' | 'light' | 'dark'
const KEY = 'quire.theme'

const choice = ref<Theme>(read())

function read(): Theme {
  try {
    const v = localStorage.getItem(KEY)
    return v === 'light' || v === 'dark' ? v : 'system'
  } catch {
    return 'system'
  }
}

function systemDark(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches
}

function apply(theme: Theme): void {
  const dark = theme === 'dark' || (theme === 'system' && systemDark())
  document.documentElement.dataset.theme = dark ? 'dark' : 'light'
}

watch(
  choice,
  (theme) => {
    apply(theme)
    try {
      if (theme === 'system') localStorage.removeItem(KEY)
      else localStorage.setItem(KEY, theme)
    } catch {
      // private mode: the choice lasts for this page only
    }
  },
  { immediate: true },
)

if (typeof matchMedia === 'function') {
  matchMedia('(prefers-color-scheme: dark)').addEventListener?.('change', () => apply(choice.value))
}

export function useTheme() {
  const cycle = () => {
    choice.value =
      choice.value === 'system' ? 'light' : choice.value === 'light' ? 'dark' : 'system'
  }
  return { theme: choice, cycle }
}
