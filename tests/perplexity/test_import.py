"""Import a folder of existing exports (both layouts) without a login."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from quire.config import Settings
from quire.sources.perplexity.importer import import_folder
from quire.sources.perplexity.render import render_markdown, thread_info
from quire.storage.db import Database
from tests.conftest import DOCS
from tests.e2e.helpers import quire
from tests.fakes.perplexity import make_thread
from tests.perplexity.conftest import drain, job_count

pytestmark = pytest.mark.slow  # the quire command as a process

SAMPLES = DOCS / "perplexity"


def exporter_file(path: Path, i: int, answer: str | None = None) -> str:
    thread = make_thread(i, space="Imported", fact=answer)
    text = render_markdown(
        thread_info(thread.list_item(), thread.entries),
        thread.entries,
        f"https://x.test/search/{thread.slug}",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return thread.slug


def test_cli_imports_the_shared_samples_without_a_login(tmp_path: Path) -> None:
    data = tmp_path / "data"
    r = quire(data, "perplexity", "import", str(SAMPLES), timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    samples = sorted(p.name for p in SAMPLES.glob("*.md"))
    for name in samples:
        assert re.search(rf"{re.escape(name)} → document \d+ \(queued\)", r.stdout), r.stdout
    docs = {d["filename"]: d for d in json.loads(quire(data, "docs", "--json").stdout)}
    assert sorted(docs) == samples
    assert {(d["kind"], d["status"]) for d in docs.values()} == {("perplexity", "ready")}
    pnw = docs["pnw-states-multiturn.md"]
    assert pnw["page_count"] == 4  # four turns
    assert pnw["title"] == "Compare population size and land area of the PNW states"
    # The native exports of one question are one turn each.
    assert {d["page_count"] for name, d in docs.items() if name != pnw["filename"]} == {1}
    assert not (data / "perplexity" / "auth.json").exists()
    again = quire(data, "perplexity", "import", str(SAMPLES), "--no-wait")
    assert again.returncode == 0 and "(duplicate)" in again.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    none = quire(data, "perplexity", "import", str(empty))
    assert none.returncode == 1 and "no Perplexity exports" in none.stderr


def test_mixed_folder_both_layouts_keyed_by_slug_or_path(
    settings: Settings, db: Database, tmp_path: Path
) -> None:
    folder = tmp_path / "exports"
    slug = exporter_file(folder / "Imported" / "one.md", 7)
    shutil.copy(SAMPLES / "pnw-states-multiturn.md", folder / "builtin.md")
    (folder / "notes.md").write_text("# Notes\n\n- a list\n- of things\n", encoding="utf-8")
    (folder / ".hidden.md").write_text("never read")
    report = import_folder(settings, db, folder)
    assert sorted(p.name for p, _ in report.intakes) == ["builtin.md", "one.md"]
    assert [p.name for p, _ in report.skipped] == ["notes.md"] and report.failed == []
    with db.read() as conn:
        keys = {r[0] for r in conn.exec_driver_sql("SELECT source_key FROM documents")}
    assert keys == {f"perplexity:{slug}", f"path:{(folder / 'builtin.md').resolve()}"}
    assert drain(settings, db) == 2

    # A newer export of the same thread, elsewhere: the same document, a new version.
    jobs = job_count(db)
    newer = tmp_path / "later"
    exporter_file(newer / "two.md", 7, answer="A regenerated answer about topic 7.")
    (intake,) = [i for _, i in import_folder(settings, db, newer).intakes]
    first_id = next(i.document_id for p, i in report.intakes if p.name == "one.md")
    assert intake.status == "updated" and intake.document_id == first_id
    assert job_count(db) == jobs + 1
    drain(settings, db)
    with db.read() as conn:
        (text,) = conn.exec_driver_sql(
            "SELECT group_concat(text, ' ') FROM page_chunks WHERE document_id = ? AND page = 1",
            (first_id,),
        ).one()
        url = conn.exec_driver_sql(
            "SELECT json_extract(metadata, '$.url') FROM documents WHERE id = ?", (first_id,)
        ).scalar_one()
    assert "regenerated answer" in text and "7000" not in text
    assert url == f"https://x.test/search/{slug}"
