// The extension's only background code: on a fresh install, open the settings, since nothing
// can be saved before a server is set. It reads no page and sends nothing.
// A classic script, not a module: Chromium runs it as the service worker, Firefox as the
// event page (manifest.json gives both keys; each browser uses its own).
const ext = globalThis.browser ?? globalThis.chrome

ext.runtime.onInstalled.addListener(async ({ reason }) => {
  if (reason !== 'install') return
  const { server } = await ext.storage.local.get('server')
  if (!server) await ext.runtime.openOptionsPage()
})
