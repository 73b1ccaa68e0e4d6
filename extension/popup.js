// The toolbar button's popup: opening it is the user's click, so it saves the active tab at
// once and shows what the server answered. `popup.html?tab=ID` saves that tab instead (the
// tests open the popup as a page of its own, which has no active tab of its own to save).
import { OUTCOMES, ext, hasAccess, loadSettings, readTab, savePage } from './quire.js'

const $ = (id) => document.getElementById(id)

function show(text, state) {
  $('status').textContent = text
  $('status').dataset.state = state
}

async function targetTab() {
  const param = new URLSearchParams(location.search).get('tab')
  if (param) return ext.tabs.get(Number(param))
  const [tab] = await ext.tabs.query({ active: true, currentWindow: true })
  return tab
}

export async function save() {
  $('retry').hidden = true
  $('open').hidden = true
  const settings = await loadSettings()
  if (!settings.server) {
    show('Set the address of your Quire server first.', 'setup')
    $('settings').hidden = false
    return
  }
  try {
    if (!(await hasAccess(settings.server))) {
      throw new Error(
        `the browser does not let the extension reach ${settings.server}: save the settings ` +
          'again and allow it',
      )
    }
    const tab = await targetTab()
    show('Reading the page…', 'busy')
    const page = await readTab(tab.id)
    $('page-title').textContent = page.title || page.url
    $('page-url').textContent = page.url
    $('page').hidden = false
    show('Saving…', 'busy')
    const saved = await savePage(settings, page)
    const outcome = OUTCOMES[saved?.status]
    if (!outcome) throw new Error(`the server answered with an unknown status: ${saved?.status}`)
    show(outcome, saved.status)
    if (Number.isInteger(saved.document?.id)) {
      $('open').href = `${settings.server}/library/${saved.document.id}`
      $('open').hidden = false
    }
  } catch (err) {
    show(err.message, 'error')
    $('retry').hidden = false
    $('settings').hidden = false
  }
}

$('retry').addEventListener('click', save)
$('settings').addEventListener('click', () => ext.runtime.openOptionsPage())
save()
