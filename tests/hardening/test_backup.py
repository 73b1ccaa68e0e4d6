"""`quire backup` while a worker writes, `quire restore` into a fresh directory, and restore's
refusals (a directory in use, a library without --force, a damaged backup)."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
from pathlib import Path

import pytest

from quire.config import Settings
from quire.ingest.worker import Worker
from quire.storage.integrity import check, in_use
from tests.conftest import DOCS
from tests.e2e.helpers import open_db, quire, start_worker, wait_until, write_long_text

pytestmark = pytest.mark.slow


def _vectors(data: Path) -> int:
    with sqlite3.connect(f"file:{data / 'quire.db'}?mode=ro", uri=True) as conn:
        try:
            # vec0 needs the extension; its rowids table is a plain shadow table.
            conn.execute(f"ATTACH '{data / 'quire_vecs.db'}' AS vec")
            return int(conn.execute("SELECT count(*) FROM vec.page_vecs_rowids").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def _library(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    files = [
        write_long_text(tmp_path / "long.txt", paragraphs=40),
        DOCS / "pdf" / "dmca-summary.pdf",
        DOCS / "perplexity" / "pnw-states-multiturn.md",
    ]
    r = quire(data, "ingest", *map(str, files))
    assert r.returncode == 0, r.stderr
    return data


def test_backup_while_the_worker_writes_then_restore_elsewhere(tmp_path: Path) -> None:
    data = _library(tmp_path)
    worker = start_worker(data, tmp_path / "worker.log", QUIRE_EMBED_BATCH="4")
    backups = []
    try:
        for n, vectors in enumerate((8, 40)):
            wait_until(lambda v=vectors: _vectors(data) >= v, 180, f"{vectors} vectors")
            dest = tmp_path / f"backup{n}"
            r = quire(data, "backup", str(dest))
            assert r.returncode == 0, r.stderr
            assert "backup written to" in r.stdout
            backups.append(dest)
        assert worker.poll() is None, "the backup must not disturb the worker"
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
    for dest in backups:
        manifest = json.loads((dest / "backup.json").read_text())
        assert manifest["documents"] == 3 and manifest["missing_files"] == []
        report = check(dest / "quire.db", dest / "quire_vecs.db")
        assert report.ok, report.problems
        # One snapshot of both files: no vector without its chunk, even mid-ingest.
        assert report.counts["orphan_vectors"] == 0
        assert report.counts["vectors"] <= report.counts["chunks"]
        assert len([p for p in (dest / "files").rglob("*") if p.is_file()]) == 3
    first, second = (check(b / "quire.db", b / "quire_vecs.db").counts for b in backups)
    assert first["vectors"] < second["vectors"]

    # Restore the mid-ingest backup elsewhere: a worker there finishes what was interrupted.
    other = tmp_path / "restored"
    r = quire(other, "restore", str(backups[0]))
    assert r.returncode == 0, r.stderr
    assert "restored into" in r.stdout
    settings = Settings(data_dir=other)
    worker_there = Worker(settings)
    worker_there.run(drain=True)
    worker_there.close()
    after = check(other / "quire.db", other / "quire_vecs.db")
    assert after.ok, after.problems
    assert after.counts["vectors"] == after.counts["chunks"] > 0
    db = open_db(other)
    with db.read() as conn:
        docs = conn.exec_driver_sql("SELECT status, stored_path FROM documents").all()
        jobs = conn.exec_driver_sql("SELECT DISTINCT status FROM ingest_jobs").scalars().all()
    db.dispose()
    assert [d.status for d in docs] == ["ready"] * 3 and jobs == ["done"]
    assert all(Path(d.stored_path).is_file() and other in Path(d.stored_path).parents for d in docs)
    listed = json.loads(quire(other, "docs", "--json").stdout)
    assert {d["status"] for d in listed} == {"ready"}


def test_restore_refusals(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (tmp_path / "a.md").write_text("# A\n\nThe heron waited by the weir.\n")
    assert quire(source, "ingest", str(tmp_path / "a.md"), "--wait").returncode == 0
    dest = tmp_path / "backup"
    assert quire(source, "backup", str(dest)).returncode == 0
    r = quire(source, "backup", str(dest))
    assert r.returncode == 1 and "not an empty directory" in r.stderr

    # A library is not overwritten without --force; with it, the old one is moved aside.
    target = tmp_path / "target"
    (tmp_path / "b.md").write_text("# B\n\nAn older library, kept aside.\n")
    assert quire(target, "ingest", str(tmp_path / "b.md"), "--wait").returncode == 0
    r = quire(target, "restore", str(dest))
    assert r.returncode == 1 and "already holds a library" in r.stderr
    # A running process keeps its files open: refused, even with --force.
    worker = start_worker(target, tmp_path / "worker.log")
    try:
        wait_until(lambda: in_use(target / "quire.db"), 60, "the worker to open the database")
        r = quire(target, "restore", str(dest), "--force")
        assert r.returncode == 1 and "open in another process" in r.stderr
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
    assert not in_use(target / "quire.db")
    r = quire(target, "restore", str(dest), "--force")
    assert r.returncode == 0, r.stderr
    aside = next(target.glob("pre-restore-*"))
    assert (aside / "quire.db").is_file() and (aside / "files").is_dir()
    names = [d["filename"] for d in json.loads(quire(target, "docs", "--json").stdout)]
    assert names == ["a.md"]

    # A damaged backup is refused before anything is touched.
    fresh = tmp_path / "fresh"
    tampered = shutil.copytree(dest, tmp_path / "tampered")
    original = next(p for p in (tampered / "files").rglob("*") if p.is_file())
    original.write_bytes(original.read_bytes() + b"tampered")
    r = quire(fresh, "restore", str(tampered))
    assert r.returncode == 1 and "damaged" in r.stderr
    assert not (fresh / "quire.db").exists()
    wrecked = shutil.copytree(dest, tmp_path / "wrecked")
    with sqlite3.connect(wrecked / "quire.db") as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'documents'")
        page = int(root.fetchone()[0])
    conn.close()
    data = bytearray((wrecked / "quire.db").read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    data[(page - 1) * page_size] = 0x42  # not a b-tree page type
    (wrecked / "quire.db").write_bytes(bytes(data))
    r = quire(fresh, "restore", str(wrecked))
    assert r.returncode == 1 and "not sound" in r.stderr, r.stderr
    assert not (fresh / "quire.db").exists()
    r = quire(fresh, "restore", str(tmp_path))
    assert r.returncode == 1 and "not a Quire backup" in r.stderr


def test_compact_gives_freed_space_back_and_refuses_a_library_in_use(tmp_path: Path) -> None:
    data = tmp_path / "data"
    big = write_long_text(tmp_path / "big.txt", paragraphs=200)
    (tmp_path / "keep.md").write_text("# Keep\n\nThe heron waited by the weir.\n")
    r = quire(data, "ingest", str(big), str(tmp_path / "keep.md"), "--wait")
    assert r.returncode == 0, r.stderr
    ids = {d["filename"]: d["id"] for d in json.loads(quire(data, "docs", "--json").stdout)}
    assert quire(data, "rm", str(ids["big.txt"])).returncode == 0

    worker = start_worker(data, tmp_path / "worker.log")
    try:
        wait_until(lambda: in_use(data / "quire.db"), 60, "the worker to open the database")
        r = quire(data, "compact")
        assert r.returncode == 1 and "open in another process" in r.stderr
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)

    before = (data / "quire.db").stat().st_size
    conn = sqlite3.connect(f"file:{data / 'quire.db'}?mode=ro", uri=True)
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    free_bytes = free * conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    # The deleted book's pages are free, not given back: a fifth of the file (600 paragraphs
    # made it half, and took two minutes more to embed).
    assert free_bytes > 0.15 * before
    r = quire(data, "compact")
    assert r.returncode == 0 and "compacted" in r.stdout, r.stderr
    # The free pages are given back (0.59 -> 0.47 MB when written), whatever else VACUUM
    # repacks.
    assert (data / "quire.db").stat().st_size <= before - 0.9 * free_bytes
    assert check(data / "quire.db", data / "quire_vecs.db").ok
    r = quire(data, "search", "heron weir", "--json")
    assert r.returncode == 0 and "keep.md" in r.stdout, r.stderr
