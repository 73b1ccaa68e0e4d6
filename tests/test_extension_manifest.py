"""The extension's privacy promises, pinned where a later change would otherwise break them
silently (docs/using/browser-extension.md, "What the extension can see and send"):

- no access to any site at install: no ``host_permissions``, no content scripts, nothing in
  ``permissions`` beyond activeTab, scripting and storage; the server's origin is an optional
  host permission asked for at run time;
- one place sends anything (``call`` in quire.js, to the configured server), and no other
  network API is used anywhere in its code.
"""

from __future__ import annotations

import json
import re

from tests.conftest import REPO

EXTENSION = REPO / "extension"
MANIFEST = json.loads((EXTENSION / "manifest.json").read_text(encoding="utf-8"))


def test_the_manifest_grants_no_site_at_install() -> None:
    assert MANIFEST["manifest_version"] == 3
    assert sorted(MANIFEST["permissions"]) == ["activeTab", "scripting", "storage"]
    assert "host_permissions" not in MANIFEST
    assert MANIFEST["optional_host_permissions"] == ["http://*/*", "https://*/*"]
    for key in ("content_scripts", "externally_connectable", "web_accessible_resources"):
        assert key not in MANIFEST, key
    assert "content_security_policy" not in MANIFEST  # MV3's default: no remote code, no eval
    # A shortcut, which the person sets, is the only other way to "click" the button.
    assert MANIFEST["commands"] == {"_execute_action": {"description": "Save this page to Quire"}}


def test_one_codebase_for_chromium_and_firefox() -> None:
    background = MANIFEST["background"]
    # Chromium runs the service worker (and ignores "scripts"); Firefox runs the event page.
    assert background == {"service_worker": "background.js", "scripts": ["background.js"]}
    gecko = MANIFEST["browser_specific_settings"]["gecko"]
    assert gecko["id"] == "save-to-quire@quire.invalid"
    assert gecko["data_collection_permissions"]["required"] == [
        "websiteContent",
        "browsingActivity",
    ]
    files = [
        background["service_worker"],
        MANIFEST["action"]["default_popup"],
        MANIFEST["options_ui"]["page"],
        *MANIFEST["action"]["default_icon"].values(),
        *MANIFEST["icons"].values(),
    ]
    for name in files:
        assert (EXTENSION / name).is_file(), name


def test_one_place_sends_and_only_to_the_server() -> None:
    code = {p.name: p.read_text(encoding="utf-8") for p in EXTENSION.glob("*.js")}
    assert set(code) == {"background.js", "options.js", "popup.js", "quire.js"}
    network = re.compile(
        r"\bfetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|importScripts|"
        r"new Image\b|\.src\s*=|navigator\.sendBeacon|runtime\.connectNative|"
        r"runtime\.sendMessage|tabs\.create|windows\.create"
    )
    found = {(name, m.group()) for name, text in code.items() for m in network.finditer(text)}
    assert found == {("quire.js", "fetch(")}
    assert "fetch(settings.server + path," in code["quire.js"]
    # Only the two routes of the contract.
    assert set(re.findall(r"'(/api/[^']*)'", code["quire.js"])) == {
        "/api/documents/url",
        "/api/health",
    }
    # No script or style from elsewhere in the extension's pages.
    for page in EXTENSION.glob("*.html"):
        assert not re.search(r"(src|href)=\"(https?:)?//", page.read_text(encoding="utf-8")), page


def test_the_page_is_read_only_when_the_popup_asks() -> None:
    code = (EXTENSION / "quire.js").read_text(encoding="utf-8")
    assert code.count("executeScript(") == 1
    # The popup is opened by the click: it alone reads a tab; the background never does.
    assert "readTab" in (EXTENSION / "popup.js").read_text(encoding="utf-8")
    for name in ("background.js", "options.js"):
        assert "readTab" not in (EXTENSION / name).read_text(encoding="utf-8"), name
