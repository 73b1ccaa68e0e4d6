"""`quire import chatgpt|claude PATH` as a user runs it (a real subprocess each time)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.conftest import DOCS
from tests.e2e.helpers import quire

pytestmark = pytest.mark.slow  # the quire command as a process


def test_import_chatgpt_zip_twice_then_claude(tmp_path: Path) -> None:
    data = tmp_path / "data"
    convs = []
    for f in sorted((DOCS / "chatgpt").glob("*.json")):
        loaded = json.loads(f.read_text(encoding="utf-8"))
        convs += loaded if isinstance(loaded, list) else [loaded]
    export = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(export, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", json.dumps(convs))
        zf.writestr("chat.html", "<html></html>")
    r = quire(data, "import", "chatgpt", str(export))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "7 conversations (33 turns, 14 web sources): 7 new, 0 updated, 0 unchanged" in r.stdout
    again = quire(data, "import", "chatgpt", str(export), "--json")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["new"], summary["updated"], summary["unchanged"]) == (0, 0, 7)

    r = quire(data, "import", "claude", str(DOCS / "claude" / "anthropic-data-2025-07"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 conversations" in r.stdout and "project documents: 1" in r.stdout
    docs = json.loads(quire(data, "docs", "--json").stdout)
    assert sorted(d["kind"] for d in docs).count("chatgpt") == 7
    assert {d["status"] for d in docs} == {"ready"}

    wrong = quire(data, "import", "claude", str(export))
    assert wrong.returncode == 1 and "quire import chatgpt" in wrong.stderr
    broken = tmp_path / "conversations.json"
    broken.write_text(json.dumps(convs)[:5000])
    bad = quire(data, "import", "chatgpt", str(broken))
    assert bad.returncode == 1 and "not valid JSON" in bad.stderr
