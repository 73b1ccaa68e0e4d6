// The settings page: the server's address and the token, kept in storage.local, and the one
// host permission they need. Saving asks the browser for exactly that origin and gives up any
// other, so the extension can never reach another site.
import {
  checkConnection,
  ext,
  hasAccess,
  isCleartext,
  loadSettings,
  normaliseServer,
  originPattern,
} from './quire.js'

const $ = (id) => document.getElementById(id)

function show(text, state) {
  $('status').textContent = text
  $('status').dataset.state = state
}

function warnIfCleartext(server) {
  $('warning').hidden = !isCleartext(server)
  $('warning').textContent =
    `http:// sends the token and the pages unencrypted to ${server}: use https:// unless the network is your own.`
}

async function load() {
  const { server, token } = await loadSettings()
  $('server').value = server
  $('token').value = token
  if (!server) {
    show('Not set yet: type the address of your Quire server.', 'setup')
    return
  }
  warnIfCleartext(server)
  if (await hasAccess(server)) show(`Pages are saved to ${server}.`, 'ok')
  else
    show(`The browser does not let the extension reach ${server} yet: save to allow it.`, 'setup')
}

/** Keep the granted origins to the server's own (an earlier server's access is given up). */
async function dropOtherOrigins(pattern) {
  const { origins = [] } = await ext.permissions.getAll()
  const others = origins.filter((o) => o !== pattern)
  if (others.length) await ext.permissions.remove({ origins: others })
}

/** The address typed, normalised; null (and the reason shown) when it is not one. */
function typedServer() {
  try {
    return normaliseServer($('server').value)
  } catch (err) {
    show(err.message, 'error')
    return null
  }
}

function onSubmit(event) {
  event.preventDefault()
  const server = typedServer()
  if (server === null) return
  const pattern = originPattern(server)
  const token = $('token').value.trim()
  // Asked for in the click itself, before anything is awaited: Firefox refuses the request
  // once the handler has given up its user gesture.
  ext.permissions.request({ origins: [pattern] }).then(
    async (granted) => {
      if (!granted) {
        show(`Not saved: the browser was not allowed to reach ${server}.`, 'error')
        return
      }
      await dropOtherOrigins(pattern)
      await ext.storage.local.set({ server, token })
      $('server').value = server
      warnIfCleartext(server)
      show(`Saved. Pages are sent to ${server} and nowhere else.`, 'ok')
    },
    (err) => show(`Not saved: ${err.message}`, 'error'),
  )
}

async function onTest() {
  const typed = typedServer()
  if (typed === null) return
  const settings = await loadSettings()
  if (typed !== settings.server || $('token').value.trim() !== settings.token) {
    show('Save the settings first: the test uses the saved ones.', 'error')
    return
  }
  if (!(await hasAccess(settings.server))) {
    show(
      `The browser does not let the extension reach ${settings.server}: save to allow it.`,
      'error',
    )
    return
  }
  show('Testing…', 'busy')
  try {
    show(await checkConnection(settings), 'ok')
  } catch (err) {
    show(err.message, 'error')
  }
}

$('form').addEventListener('submit', onSubmit)
$('test').addEventListener('click', onTest)
load()
