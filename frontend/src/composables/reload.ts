// Load the page again (after the token changed): its own module so tests can replace it,
// since jsdom's location.reload can be neither called nor spied on.
export function reloadPage(): void {
  location.reload()
}
