import { fileURLToPath, URL } from 'node:url'

import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'

// `npm run dev` proxies the API to `quire serve` (QUIRE_API, default 127.0.0.1:8000), so the
// app is developed against the real backend exactly as nginx serves it.
const api = process.env.QUIRE_API ?? 'http://127.0.0.1:8000'

export default defineConfig({
  plugins: [vue()],
  resolve: {
    alias: {
      '@': fileURLToPath(new URL('./src', import.meta.url)),
    },
  },
  server: {
    proxy: {
      '/api': { target: api, changeOrigin: false },
      '/v1': { target: api, changeOrigin: false },
    },
  },
  build: {
    chunkSizeWarningLimit: 600,
  },
})
