"""Watched folders with a real watcher on a temp folder, the real intake and the real worker:
after each step the library's ready documents are exactly the folder's files, each once."""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import text

from quire.config import Settings
from quire.ingest.worker import Worker
from quire.retrieval.filters import Filter
from quire.sources.folder import REMOVED, FolderMissing, FolderSync
from quire.storage import chunks, documents, source_runs
from quire.storage.db import Database
from tests.fakes.embedder import CountingEmbedder
from tests.ingest.test_image import TYPEWRITER
from tests.watch.conftest import library, matches, settle, visible, watching

pytestmark = pytest.mark.both_backends


def _sections(n: int, tag: str = "") -> str:
    return "\n\n".join(
        f"## Section {i}\n\n" + f"Paragraph {i}{tag} about topic zq{i}x. " * 40 for i in range(n)
    )


def _chunk_texts(db: Database, doc_id: int) -> list[str]:
    with db.read() as conn:
        rows = conn.execute(
            text("SELECT text FROM page_chunks WHERE document_id = :d"), {"d": doc_id}
        ).all()
    return [r[0] for r in rows]


def _vector_count(db: Database) -> int:
    with db.read() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM vec.page_vecs").scalar_one())


def test_create_modify_rename_delete_follow_the_folder(
    vault: Path, db: Database, settings: Settings, worker: Worker, embedder: CountingEmbedder
) -> None:
    with watching(db, settings, vault):
        (vault / "a.md").write_text("# Paper notes\n\n" + _sections(6), encoding="utf-8")
        (vault / "b.txt").write_text("A plain note about zebras.\n", encoding="utf-8")
        # Ignored: dotfiles, dot-folders, temp files, .quireignore patterns; refused: binary.
        (vault / ".obsidian").mkdir()
        (vault / ".obsidian" / "workspace.md").write_text("# not a note\n\nstate")
        (vault / ".hidden.md").write_text("# hidden\n\ntext")
        (vault / "~$report.txt").write_text("lock file")
        (vault / "a.md.swp").write_text("swap")
        (vault / "big.pdf.part").write_text("half a download")
        (vault / "x.crdownload").write_text("half a download")
        (vault / ".quireignore").write_text("drafts/\n*.log\n")
        (vault / "drafts").mkdir()
        (vault / "drafts" / "d.md").write_text("# draft\n\nnot yet")
        (vault / "run.log").write_text("log line")
        (vault / "clip.gif").write_bytes(b"GIF89a" + bytes(range(256)) * 4)  # not read
        settle(worker, matches(db, vault))
        docs = library(db, vault)
        assert sorted(docs) == ["a.md", "b.txt"]
        a_id = docs["a.md"]["id"]

        # Modify one section: a new version of the same document, only changed chunks embedded.
        before = set(_chunk_texts(db, a_id))
        embedder.texts.clear()
        body = "# Paper notes\n\n" + _sections(6).replace("Paragraph 3 ", "Paragraph 3 edited ")
        (vault / "a.md").write_text(body, encoding="utf-8")
        settle(worker, matches(db, vault))
        after = set(_chunk_texts(db, a_id))
        assert library(db, vault)["a.md"]["id"] == a_id
        assert set(embedder.texts) == after - before
        assert 0 < len(embedder.texts) < len(after)
        assert _vector_count(db) == len(after) + len(_chunk_texts(db, docs["b.txt"]["id"]))

        # Rename (into a subfolder): the same document, nothing embedded again.
        embedder.texts.clear()
        (vault / "notes").mkdir()
        os.rename(vault / "a.md", vault / "notes" / "a-renamed.md")
        settle(worker, matches(db, vault))
        docs = library(db, vault)
        assert docs["notes/a-renamed.md"]["id"] == a_id and "a.md" not in docs
        assert embedder.texts == []
        with db.read() as conn:
            doc = documents.get_document(conn, a_id)
        assert doc["filename"] == "a-renamed.md"
        assert doc["metadata"]["origin"]["path"] == "notes/a-renamed.md"

        # Delete: hidden from search, data kept; back with the same bytes: visible again.
        b_id = docs["b.txt"]["id"]
        b_bytes = (vault / "b.txt").read_bytes()
        (vault / "b.txt").unlink()
        settle(worker, matches(db, vault))
        gone = library(db, vault)["b.txt"]
        assert gone["status"] == "failed" and REMOVED in gone["error"]
        assert f"quire rm {b_id}" in gone["error"]
        with db.read() as conn:
            assert b_id not in Filter().allowed_documents(conn)
        assert _chunk_texts(db, b_id)
        (vault / "b.txt").write_bytes(b_bytes)
        settle(worker, matches(db, vault))
        assert library(db, vault)["b.txt"]["id"] == b_id
        assert embedder.texts == []

        # An empty file is refused until it gets content.
        (vault / "later.txt").write_bytes(b"")
        time.sleep(0.3)
        (vault / "later.txt").write_text("now with words in it")
        settle(worker, matches(db, vault))

    with db.read() as conn:
        total = conn.exec_driver_sql("SELECT count(*) FROM documents").scalar_one()
    assert total == 3  # a, b, later: no duplicates, nothing from ignored files


def test_a_file_written_slowly_is_read_once_complete(
    vault: Path, db: Database, settings: Settings, worker: Worker
) -> None:
    pieces = [f"Piece {i} of a slowly written note. " * 50 + "\n\n" for i in range(6)]
    with watching(db, settings, vault):
        with (vault / "slow.txt").open("w", encoding="utf-8") as f:
            for piece in pieces:
                f.write(piece)
                f.flush()
                deadline = time.monotonic() + 0.3
                while time.monotonic() < deadline:  # meanwhile the worker runs
                    worker.run(drain=True)
                    assert "slow.txt" not in library(db, vault)
                    time.sleep(0.05)
        settle(worker, matches(db, vault))
    doc = library(db, vault)["slow.txt"]
    with db.read() as conn:
        jobs_run = conn.execute(
            text("SELECT count(*) FROM ingest_jobs WHERE document_id = :d"), {"d": doc["id"]}
        ).scalar_one()
        size = conn.execute(
            text("SELECT byte_size FROM documents WHERE id = :d"), {"d": doc["id"]}
        ).scalar_one()
    assert jobs_run == 1 and size == len("".join(pieces).encode())


@pytest.mark.slow  # 200 files through a real watcher and worker
def test_a_burst_of_200_files(
    vault: Path, db: Database, settings: Settings, worker: Worker
) -> None:
    with watching(db, settings, vault):
        for i in range(200):
            sub = vault / f"batch{i % 4}"
            sub.mkdir(exist_ok=True)
            (sub / f"note-{i:03d}.md").write_text(f"# Note {i}\n\nUnique marker qq{i}zz.\n")
        settle(worker, matches(db, vault), timeout=40)
    assert len(library(db, vault)) == 200


def test_a_restart_catches_up_with_changes_made_while_stopped(
    vault: Path, db: Database, settings: Settings, worker: Worker, embedder: CountingEmbedder
) -> None:
    for name in ("keep", "change", "delete", "move"):
        (vault / f"{name}.md").write_text(f"# {name}\n\n" + _sections(3, tag=name))
    with watching(db, settings, vault):
        settle(worker, matches(db, vault))
    ids = {rel: d["id"] for rel, d in library(db, vault).items()}

    # While no watcher runs:
    (vault / "change.md").write_text("# change\n\n" + _sections(3, tag="changed"))
    (vault / "delete.md").unlink()
    os.rename(vault / "move.md", vault / "moved.md")
    (vault / "new.md").write_text("# new\n\nA note added while Quire was down.")
    old = time.time() - 60  # written a while ago: stable at once
    for name in ("change.md", "moved.md", "new.md"):
        os.utime(vault / name, (old, old))

    embedder.texts.clear()
    with watching(db, settings, vault):
        settle(worker, matches(db, vault))
    docs = library(db, vault)
    assert docs["keep.md"]["id"] == ids["keep.md"]
    assert docs["change.md"]["id"] == ids["change.md"]
    assert docs["moved.md"]["id"] == ids["move.md"]
    assert docs["delete.md"]["status"] == "failed"
    assert set(visible(db, vault)) == {"keep.md", "change.md", "moved.md", "new.md"}
    assert not any("keep" in t for t in embedder.texts)  # unchanged documents not embedded


def test_removed_documents_are_deleted_after_the_grace_period(
    vault: Path, db: Database, settings: Settings, worker: Worker
) -> None:
    (vault / "n.txt").write_text("a note that will be deleted")
    os.utime(vault / "n.txt", (time.time() - 60, time.time() - 60))
    FolderSync(db, settings, vault).sync()
    worker.run(drain=True)
    (vault / "n.txt").unlink()
    assert FolderSync(db, settings, vault).sync().removed == 1
    assert library(db, vault)["n.txt"]["status"] == "failed"
    later = FolderSync(db, settings, vault, clock=lambda: time.time() + 31 * 86400)
    assert later.sync().purged == 1
    assert library(db, vault) == {}


def test_a_vanished_folder_keeps_its_documents_and_is_resumed(
    vault: Path,
    tmp_path: Path,
    db: Database,
    settings: Settings,
    worker: Worker,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="quire.sources.watch")
    (vault / "one.md").write_text("# One\n\nThe first note.")
    aside = tmp_path / "aside"
    with watching(db, settings, vault) as watcher:
        settle(worker, matches(db, vault))
        shutil.move(vault, aside)  # unmounted, or deleted
        deadline = time.monotonic() + 10
        while not watcher.missing and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watcher.missing
        assert any("is missing" in r.getMessage() for r in caplog.records)
        worker.run(drain=True)  # the worker goes on
        assert library(db, vault)["one.md"]["status"] == "ready"  # not emptied

        (aside / "two.md").write_text("# Two\n\nAdded while the folder was away.")
        shutil.move(aside, vault)
        settle(worker, matches(db, vault))
        assert sorted(visible(db, vault)) == ["one.md", "two.md"]
        assert any("is back" in r.getMessage() for r in caplog.records)

        (vault / "three.md").write_text("# Three\n\nAfter the return, the watcher sees it.")
        settle(worker, matches(db, vault))
        assert not watcher.missing


def test_an_obsidian_note_keeps_front_matter_wikilinks_and_headings(
    vault: Path, db: Database, settings: Settings, worker: Worker
) -> None:
    note = (
        "---\ntitle: Reading list\ntags:\n  - research\n  - ml\n---\n"
        "# Papers\n\nSee [[Attention Is All You Need|the transformer]] and [[BERT]].\n\n"
        "## Follow-ups\n\nRead [[RoBERTa]] next.\n"
    )
    (vault / "Reading.md").write_text(note)
    os.utime(vault / "Reading.md", (time.time() - 60, time.time() - 60))
    FolderSync(db, settings, vault).sync()
    settle(worker, matches(db, vault))
    doc_id = library(db, vault)["Reading.md"]["id"]
    with db.read() as conn:
        doc = documents.get_document(conn, doc_id)
        pages = [chunks.get_page(conn, doc_id, p["page"]) for p in chunks.list_pages(conn, doc_id)]
    assert doc["title"] == "Reading list"
    assert doc["metadata"]["front_matter"]["tags"] == "research, ml"
    assert doc["metadata"]["origin"] == {
        "type": "folder",
        "folder": str(vault),
        "path": "Reading.md",
        "size": (vault / "Reading.md").stat().st_size,
        "mtime_ns": (vault / "Reading.md").stat().st_mtime_ns,
    }
    assert [p and p["heading_path"] for p in pages] == ["Papers", "Papers > Follow-ups"]
    assert "[[Attention Is All You Need|the transformer]]" in str(pages[0] and pages[0]["text"])
    assert "[[RoBERTa]]" in str(pages[1] and pages[1]["text"])


def test_passes_and_a_missing_folder_are_listed_for_the_settings_page(
    vault: Path, tmp_path: Path, db: Database, settings: Settings
) -> None:
    sync = FolderSync(db, settings, vault)
    sync.sync()  # the first pass is noted even when nothing changed
    (vault / "a.md").write_text("# A\n\nA note.")
    FolderSync(db, settings, vault, clock=lambda: time.time() + 60).sync()  # a restart
    sync.sync()  # no change: not noted
    with db.read() as conn:
        runs = source_runs.latest(conn, "folder")
        listed = source_runs.library_sources(conn, [vault, tmp_path / "never"])
    (run,) = runs
    assert run["location"] == str(vault) and run["ok"] and run["summary"]["added"] == 1
    folders = {f["path"]: f for f in listed["watched_folders"]}
    assert folders[str(vault)]["documents"] == 1 and folders[str(vault)]["configured"]
    assert folders[str(tmp_path / "never")] == {
        "path": str(tmp_path / "never"),
        "configured": True,
        "exists": False,
        "documents": 0,
        "removed": 0,
        "last_run": None,
    }
    shutil.rmtree(vault)
    for _ in range(3):  # noted once, not at every rescan
        with pytest.raises(FolderMissing):
            sync.sync()
    with db.read() as conn:
        (gone,) = source_runs.latest(conn, "folder")
        count = conn.exec_driver_sql("SELECT count(*) FROM source_runs").scalar()
    assert not gone["ok"] and "is missing" in gone["error"] and count == 3


def test_a_scan_in_the_folder_is_read_as_its_pages(
    vault: Path, db: Database, settings: Settings, worker: Worker
) -> None:
    with Image.open(TYPEWRITER) as im:
        im.convert("L").reduce(2).save(vault / "recipe.tiff")
    os.utime(vault / "recipe.tiff", (time.time() - 60, time.time() - 60))
    FolderSync(db, settings, vault).sync()
    settle(worker, matches(db, vault))
    doc_id = library(db, vault)["recipe.tiff"]["id"]
    with db.read() as conn:
        doc = documents.get_document(conn, doc_id)
        page = chunks.get_page(conn, doc_id, 1)
    assert doc["kind"] == "image" and doc["page_count"] == 1 and doc["status"] == "ready"
    assert page is not None and "Linzensoep a la Waterman" in page["text"]
