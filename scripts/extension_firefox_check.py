"""Check the extension in Firefox, by hand (the suite drives Chromium only; Firefox is not a
dependency of Quire):

    apt-get install firefox-esr        # once
    .venv/bin/python scripts/extension_firefox_check.py

Headless Firefox is driven over WebDriver BiDi (a small WebSocket client below, no driver to
install): extension/ is installed as a temporary add-on, and its settings page and popup run
against the tests' fake Quire (tests/fakes/quire_save.py) and a real saved page. BiDi has no
toolbar click, so the popup saves the page through a host permission for the page's site
granted for the check (what activeTab grants for one tab on a real click); before that grant
it must be refused. Prints each step; exits non-zero at the first that fails.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.extension_helpers import EXTENSION, saved_pages_site  # noqa: E402
from tests.fakes.quire_save import FakeQuire  # noqa: E402

ADDON_ID = "save-to-quire@quire.invalid"
TOKEN = "firefox-check-token"
PAGE = "readability-v8-blog.html"


class WebSocket:
    """Just enough of RFC 6455 for BiDi: text frames, masked from the client."""

    def __init__(self, port: int, path: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"no WebSocket: {head!r}")

    def send(self, text: str) -> None:
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
        if n >= 65536:
            size = bytes([0x80 | 127]) + struct.pack(">Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(bytes([0x81]) + size + mask + masked)

    def _exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise RuntimeError("the browser closed the connection")
            out += chunk
        return out

    def recv(self) -> str:
        message = b""
        while True:
            b1, b2 = self._exact(2)
            n = b2 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            message += self._exact(n)
            if b1 & 0x80:
                return message.decode()


class Bidi:
    def __init__(self, port: int) -> None:
        self.ws = WebSocket(port, "/session")
        self.next = 0

    def call(self, method: str, **params: Any) -> Any:
        self.next += 1
        self.ws.send(json.dumps({"id": self.next, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next:
                if reply.get("type") == "error":
                    raise RuntimeError(f"{method}: {reply.get('error')}: {reply.get('message')}")
                return reply["result"]

    def evaluate(self, context: str, expression: str) -> Any:
        result = self.call(
            "script.evaluate", expression=expression, target={"context": context}, awaitPromise=True
        )
        if result["type"] == "exception":
            raise RuntimeError(result["exceptionDetails"]["text"])
        return _value(result["result"])

    def open(self, url: str) -> str:
        context = self.call("browsingContext.create", type="tab")["context"]
        self.call("browsingContext.navigate", context=context, url=url, wait="complete")
        return context

    def click(self, context: str, selector: str) -> None:
        """A real click (trusted input, as permissions.request wants in Firefox)."""
        box = self.evaluate(
            context,
            f"(r => [r.x + r.width / 2, r.y + r.height / 2])"
            f"(document.querySelector({json.dumps(selector)}).getBoundingClientRect())",
        )
        self.call(
            "input.performActions",
            context=context,
            actions=[
                {
                    "type": "pointer",
                    "id": "mouse",
                    "parameters": {"pointerType": "mouse"},
                    "actions": [
                        {"type": "pointerMove", "x": int(box[0]), "y": int(box[1])},
                        {"type": "pointerDown", "button": 0},
                        {"type": "pointerUp", "button": 0},
                    ],
                }
            ],
        )

    def find(self, url: str, timeout_s: float = 20) -> str:
        """The tab showing ``url`` (BiDi may not navigate to moz-extension:// itself)."""
        deadline = time.monotonic() + timeout_s
        while True:
            for ctx in self.call("browsingContext.getTree")["contexts"]:
                if ctx["url"] == url:
                    return str(ctx["context"])
            if time.monotonic() > deadline:
                raise AssertionError(f"no tab at {url}")
            time.sleep(0.1)

    def wait_for(self, context: str, expression: str, timeout_s: float = 20) -> Any:
        deadline = time.monotonic() + timeout_s
        while not (value := self.evaluate(context, expression)):
            if time.monotonic() > deadline:
                shown = self.evaluate(context, "document.body.innerText")
                raise AssertionError(f"still false after {timeout_s} s: {expression}\n{shown}")
            time.sleep(0.1)
        return value


def _value(remote: dict[str, Any]) -> Any:
    """A BiDi remote value as Python (strings, numbers, booleans, arrays, objects)."""
    kind = remote["type"]
    if kind in ("string", "number", "boolean"):
        return remote["value"]
    if kind in ("undefined", "null"):
        return None
    if kind == "array":
        return [_value(v) for v in remote.get("value", [])]
    if kind == "object":
        return {k: _value(v) for k, v in remote.get("value", [])}
    return remote


def step(text: str) -> None:
    print(f"ok  {text}")  # noqa: T201 - a script's output


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    firefox = shutil.which("firefox-esr") or shutil.which("firefox")
    if not firefox:
        sys.exit("no Firefox: apt-get install firefox-esr")
    version = subprocess.run([firefox, "--version"], capture_output=True, text=True).stdout
    print(version.strip())  # noqa: T201
    internal = str(uuid.uuid4())
    with (
        tempfile.TemporaryDirectory() as profile,
        FakeQuire(token=TOKEN) as fake,
        saved_pages_site() as (site, _),
    ):
        prefs = {
            # Optional permissions granted without their prompt (headless has no one to click).
            "extensions.webextOptionalPermissionPrompts": False,
            # The add-on's moz-extension:// host, fixed so that its pages can be opened.
            "extensions.webextensions.uuids": json.dumps({ADDON_ID: internal}),
            "browser.shell.checkDefaultBrowser": False,
            "datareporting.policy.dataSubmissionEnabled": False,
        }
        Path(profile, "user.js").write_text(
            "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in prefs.items())
        )
        port = free_port()
        proc = subprocess.Popen(
            [
                firefox,
                "--headless",
                "--no-remote",
                "--profile",
                profile,
                f"--remote-debugging-port={port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    bidi = Bidi(port)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.3)
            bidi.call("session.new", capabilities={})
            installed = bidi.call(
                "webExtension.install", extensionData={"type": "path", "path": str(EXTENSION)}
            )
            assert installed["extension"] == ADDON_ID, installed
            step(f"installed as a temporary add-on: {installed['extension']}")

            base = f"moz-extension://{internal}"
            options = bidi.find(f"{base}/options.html")  # opened by the add-on as installed
            status = "document.getElementById('status').textContent"
            assert bidi.wait_for(options, status).startswith("Not set yet"), "options did not run"
            step("the settings page opened as it was installed, and runs (its modules load)")

            fill = (
                f"document.getElementById('server').value = {json.dumps(fake.url + '/')};"
                f"document.getElementById('token').value = {json.dumps(TOKEN)}"
            )
            bidi.evaluate(options, fill)
            bidi.click(options, "button[type=submit]")
            saved = bidi.wait_for(options, f"{status}.startsWith('Saved') && {status}")
            assert saved == f"Saved. Pages are sent to {fake.url} and nowhere else.", saved
            origins = bidi.evaluate(options, "browser.permissions.getAll().then(p => p.origins)")
            assert origins == ["http://127.0.0.1/*"], origins
            step(f"Save asked for exactly {origins} (no port in Firefox's pattern)")

            bidi.click(options, "#test")
            tested = bidi.wait_for(options, f"{status}.startsWith('Connected') && {status}")
            assert tested == "Connected to Quire 0.1.0; the token is accepted.", tested
            step(f"Test connection: {tested}")

            tabs = "browser.tabs.query({}).then(t => t.map(x => x.id))"
            before = set(bidi.evaluate(options, tabs))
            bidi.open(f"{site}/{PAGE}")
            (tab,) = set(bidi.evaluate(options, tabs)) - before
            saves = len(fake.saves())
            popup_url = f"{base}/popup.html?tab={tab}"
            bidi.evaluate(options, f"browser.tabs.create({{url: {json.dumps(popup_url)}}})")
            popup = bidi.find(popup_url)
            state = "document.getElementById('status').dataset.state"
            settled = f"!['busy', undefined].includes({state}) && {status}"
            refused = bidi.wait_for(popup, settled)
            assert "does not let extensions read this page" in refused, refused
            assert len(fake.saves()) == saves
            step("without a grant for the page the popup cannot read it, and sends nothing")

            # A button of the check's own, clicked for real, asks for the page's site.
            bidi.evaluate(
                options,
                "document.body.insertAdjacentHTML('beforeend', '<button id=grant>grant</button>');"
                "document.getElementById('grant').onclick = () => browser.permissions"
                ".request({origins: ['http://localhost/*']}).then(g => { window.granted = g })",
            )
            bidi.click(options, "#grant")
            assert bidi.wait_for(options, "window.granted === true")
            bidi.call("browsingContext.reload", context=popup, wait="complete")
            shown = bidi.wait_for(popup, settled)
            assert shown == "Saved", shown
            (request,) = [r for r in fake.requests if r.path == "/api/documents/url"][-1:]
            body = request.json()
            assert body["url"] == f"{site}/{PAGE}" and "standalone WebAssembly" in body["html"]
            assert (
                "<script" not in body["html"]
                and request.headers["authorization"] == f"Bearer {TOKEN}"
            )
            assert request.headers["origin"] == f"moz-extension://{internal}"
            step(f"with it, the popup saved the page: {shown} ({len(body['html'])} characters)")
            bidi.evaluate(options, "browser.permissions.remove({origins: ['http://localhost/*']})")
            print("Firefox: all checks passed")  # noqa: T201
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
