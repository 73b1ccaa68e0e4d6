"""Crash safety with real processes: the worker killed with -9 at random points of an ingest,
the API killed with -9 while it streams an answer, and "power cuts" (the database files and
their WAL copied while a write is under way, some with a torn WAL tail). After each restart the
files pass every integrity check, nothing is orphaned, every interrupted job ends, and no
document is lost.

The random points come from ``QUIRE_CRASH_SEED`` (default 7); a failure prints the seed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from quire.config import Settings
from quire.embed.base import Vectors, l2_normalise
from quire.ingest.worker import Worker
from quire.storage.integrity import check, connect
from tests.conftest import DOCS
from tests.e2e.helpers import QUIRE, env_for, quire, start_worker, wait_until, write_long_text
from tests.e2e.stack import free_port
from tests.fakes.chat import Reply
from tests.fakes.ollama import FakeOllama
from tests.fakes.rag_model import RagModel

pytestmark = pytest.mark.slow
SEED = int(os.environ.get("QUIRE_CRASH_SEED", "7"))
SNAPSHOTS = 5


def _library(tmp_path: Path, paragraphs: int = 60) -> tuple[Path, int]:
    """A data dir with three documents queued (PDF, EPUB, text); returns it and the count."""
    data = tmp_path / "data"
    files = [
        DOCS / "pdf" / "dmca-summary.pdf",
        DOCS / "epub" / "readium-smoketest-epub2.epub",
        write_long_text(tmp_path / "long.txt", paragraphs=paragraphs, seed=SEED),
    ]
    r = quire(data, "ingest", *map(str, files))
    assert r.returncode == 0, r.stderr
    return data, len(files)


def _jobs(data: Path) -> list[dict[str, Any]]:
    with connect(data / "quire.db") as conn:
        rows = conn.execute(
            "SELECT id, document_id, status, stage, attempts, error, worker_id FROM ingest_jobs "
            "ORDER BY id"
        ).fetchall()
    keys = ("id", "document_id", "status", "stage", "attempts", "error", "worker_id")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def _assert_whole(data: Path, documents: int) -> dict[str, int]:
    """Sound files, nothing orphaned, every job ended well, every document ready."""
    report = check(data / "quire.db", data / "quire_vecs.db")
    assert report.ok, report.problems
    c = report.counts
    assert c["documents"] == documents, c
    assert c["orphan_vectors"] == c["orphan_chunks"] == c["orphan_pages"] == 0, c
    assert c["vectors"] == c["chunks"] == c["fts_rows"] == c["tri_rows"] > 0, c
    jobs = _jobs(data)
    assert {j["status"] for j in jobs} == {"done"}, jobs
    with connect(data / "quire.db") as conn:
        statuses = [r[0] for r in conn.execute("SELECT status FROM documents")]
        duplicates = conn.execute(
            "SELECT count(*) FROM (SELECT document_id, page, ordinal FROM page_chunks "
            "GROUP BY 1, 2, 3 HAVING count(*) > 1)"
        ).fetchone()[0]
    assert statuses == ["ready"] * documents and duplicates == 0
    return c


# Where the kills land: a document at a stage (or later in it), then a random 0-0.4 s more.
# Time alone would mostly catch the slow first extraction; targets spread the kills.
KILL_TARGETS = [(1, "extract"), (1, "embed"), (2, "extract"), (2, "embed"), (3, "extract")]
# The stages a job goes through, in order ("starting": taken by a worker, before its first stage).
STAGES = ("queued", "starting", "extract", "ocr", "chunk", "embed", "done")


def test_worker_killed_at_random_points_loses_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    data, n_docs = _library(tmp_path, paragraphs=30)
    log = tmp_path / "worker.log"
    killed_in: list[str] = []
    for doc_id, stage in KILL_TARGETS:
        if all(j["status"] == "done" for j in _jobs(data)):
            break
        worker = start_worker(data, log, QUIRE_EMBED_BATCH="4")
        mine = f":{worker.pid}:"

        def mine_running(mine: str = mine) -> list[dict[str, Any]]:
            return [j for j in _jobs(data) if j["status"] == "running" and mine in j["worker_id"]]

        def reached(doc_id: int = doc_id, stage: str = stage) -> bool:
            running = mine_running()
            jobs = _jobs(data)
            target = next(j for j in jobs if j["document_id"] == doc_id)
            if target["status"] == "done":  # missed it: kill wherever the worker is now
                return bool(running) or all(j["status"] == "done" for j in jobs)
            return any(
                j["document_id"] == doc_id and STAGES.index(j["stage"]) >= STAGES.index(stage)
                for j in running
            )

        try:
            wait_until(reached, 120, f"document {doc_id} to reach {stage}")
            time.sleep(rng.uniform(0.0, 0.4))
            running = mine_running()
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait(timeout=10)
        killed_in += [f"{j['document_id']}:{j['stage']}" for j in running] or ["between jobs"]
        mid = check(data / "quire.db", data / "quire_vecs.db")
        assert mid.ok, (SEED, mid.problems)  # sound even before any restart
    assert len(killed_in) >= 4, killed_in
    worker = start_worker(data, log)
    try:
        wait_until(
            lambda: all(j["status"] in ("done", "failed") for j in _jobs(data)),
            240,
            "the interrupted jobs to end",
        )
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    counts = _assert_whole(data, n_docs)
    attempts = sum(j["attempts"] for j in _jobs(data))
    print(f"\nseed {SEED}: {len(killed_in)} kills in {killed_in}; {attempts} attempts; {counts}")


# --- the API killed while it streams an answer ----------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["llama3.2:latest"]) as server:
        yield server


def _start_api(data: Path, port: int, fake: FakeOllama, log: Path) -> subprocess.Popen[bytes]:
    env = env_for(
        data,
        QUIRE_LLM_BACKENDS="ollama",
        QUIRE_OLLAMA_URL=fake.url,
        QUIRE_LLM_RETRIES="0",
    )
    with log.open("ab") as fh:
        api = subprocess.Popen(
            [*QUIRE, "serve", "--port", str(port)], env=env, stdout=fh, stderr=subprocess.STDOUT
        )

    def up() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(up, 60, "the API")
    return api


def _events(response: httpx.Response) -> Iterator[tuple[str, Any]]:
    event = "message"
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


def test_api_killed_mid_answer_keeps_the_conversation(tmp_path: Path, fake: FakeOllama) -> None:
    data = tmp_path / "data"
    notes = tmp_path / "notes.md"
    notes.write_text(
        "# Herons\n\nThe grey heron hunts fish in shallow water by the weir at dawn.\n\n"
        "## Nests\n\nHerons nest in colonies called heronries, high in tall trees.\n"
    )
    assert quire(data, "ingest", str(notes), "--wait").returncode == 0
    long_answer = " ".join(f"w{i}" for i in range(200)) + " [1]."
    fake.responder = RagModel(
        overrides={"answer": lambda _: Reply(long_answer, token_delay_s=0.05)}
    )
    port = free_port()
    log = tmp_path / "api.log"
    conversation = None
    for tokens_before_kill in (0, 5):
        api = _start_api(data, port, fake, log)
        body: dict[str, Any] = {"message": "Where does the heron hunt?"}
        if conversation is not None:
            body["conversation_id"] = conversation
        tokens = 0
        try:
            with (
                httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
                http.stream("POST", "/api/chat", json=body) as r,
            ):
                assert r.status_code == 200
                for name, event in _events(r):
                    if name == "start":
                        conversation = event["conversation_id"]
                    if name == "token":
                        tokens += 1
                    if (name == "token" and tokens > tokens_before_kill) or (
                        tokens_before_kill == 0 and name == "retrieval"
                    ):
                        api.send_signal(signal.SIGKILL)
                        api.wait(timeout=10)
                        break
        except httpx.HTTPError:
            pass  # the connection died with the API: what a browser would see
        finally:
            if api.poll() is None:
                api.kill()
        assert api.returncode == -signal.SIGKILL
        report = check(data / "quire.db", data / "quire_vecs.db")
        assert report.ok, report.problems
    wait_until(lambda: fake.stream_outcomes["cancelled"] >= 1, 15, "the LLM stream to be closed")
    # Restarted: the questions are all there, the conversation goes on, answers complete.
    api = _start_api(data, port, fake, log)
    try:
        fake.responder = RagModel()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            stored = http.get(f"/api/conversations/{conversation}").json()["messages"]
            assert [m["role"] for m in stored] == ["user"] * 2
            with http.stream(
                "POST",
                "/api/chat",
                json={"message": "And where do herons nest?", "conversation_id": conversation},
            ) as r:
                events = list(_events(r))
            assert events[-1][0] == "done", events[-1]
            stored = http.get(f"/api/conversations/{conversation}").json()["messages"]
            assert stored[-1]["role"] == "assistant" and stored[-1]["status"] == "complete"
            assert http.get("/api/health").json()["documents"] == 1
    finally:
        api.terminate()
        api.wait(timeout=30)
    assert check(data / "quire.db", data / "quire_vecs.db").ok


# --- power cuts -----------------------------------------------------------------------------


@dataclass
class StubEmbedder:
    """Fast deterministic vectors under the name the snapshot's vectors were made with."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = [
            np.resize(np.frombuffer(hashlib.sha256(t.encode()).digest(), np.uint8), self.dim)
            for t in texts
        ]
        return l2_normalise(np.asarray(rows, dtype=np.float32) - 127.5)

    def close(self) -> None:
        pass


def _wait_stopped(pid: int) -> None:
    """Until every thread of ``pid`` is stopped (SIGSTOP is delivered asynchronously)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
            except (FileNotFoundError, IndexError):
                continue
        if states and all(s in "tT" for s in states):
            return
        time.sleep(0.001)
    raise AssertionError(f"process {pid} did not stop")


def _frame_bounds(shm: bytes, wal_size: int, page_size: int) -> int:
    """The first WAL byte that may be lost in a power cut: the end of the frames already
    copied into the database (which were synced before they were)."""
    backfilled = int.from_bytes(shm[96:100], "little") if len(shm) >= 100 else 0
    return min(wal_size, 32 + backfilled * (24 + page_size))


def _power_cut(data: Path, pid: int, image: Path, torn: Path, rng: random.Random) -> int:
    """Freeze the writer, copy what is on disk, let it go on; ``torn`` also loses a random
    tail of each WAL that had not been checkpointed. Returns the WAL bytes ``torn`` lost."""
    lost = 0
    image.mkdir()
    torn.mkdir()
    os.kill(pid, signal.SIGSTOP)
    try:
        _wait_stopped(pid)
        for name in ("quire.db", "quire_vecs.db"):
            for suffix in ("", "-wal", "-shm"):
                if (data / f"{name}{suffix}").exists():
                    shutil.copyfile(data / f"{name}{suffix}", image / f"{name}{suffix}")
    finally:
        os.kill(pid, signal.SIGCONT)
    for name in ("quire.db", "quire_vecs.db"):
        shm = image / f"{name}-shm"
        shm_bytes = shm.read_bytes() if shm.exists() else b""
        shm.unlink(missing_ok=True)  # memory, not disk: gone in a power cut
        shutil.copyfile(image / name, torn / name)
        wal = image / f"{name}-wal"
        if not wal.exists():
            continue
        data_bytes = wal.read_bytes()
        page_size = int.from_bytes((image / name).read_bytes()[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        lo = _frame_bounds(shm_bytes, len(data_bytes), page_size)
        cut = rng.randint(lo, len(data_bytes))
        (torn / f"{name}-wal").write_bytes(data_bytes[:cut])
        lost += len(data_bytes) - cut
    return lost


def _vec_meta(image: Path) -> tuple[str, int]:
    with connect(image / "quire.db", image / "quire_vecs.db") as conn:
        try:
            row = conn.execute("SELECT model, dim FROM vec.page_vecs_meta").fetchone()
        except Exception:  # noqa: BLE001 - no vector store yet
            row = None
    return (str(row[0]), int(row[1])) if row else ("test:stub-384", 384)


def test_power_cuts_mid_write_leave_sound_files(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    data, n_docs = _library(tmp_path, paragraphs=30)
    worker = start_worker(data, tmp_path / "worker.log", QUIRE_EMBED_BATCH="4")
    images: list[Path] = []
    lost = 0

    def writing() -> bool:
        # Chunks, vectors and progress are written in these stages (extraction writes little).
        jobs = _jobs(data)
        return all(j["status"] == "done" for j in jobs) or any(
            j["status"] == "running" and j["stage"] in ("chunk", "embed") for j in jobs
        )

    try:
        for n in range(SNAPSHOTS):
            wait_until(writing, 120, "the worker to write chunks or vectors")
            time.sleep(rng.uniform(0.0, 0.3))
            if worker.poll() is not None or all(j["status"] == "done" for j in _jobs(data)):
                break
            image, torn = tmp_path / f"cut{n}", tmp_path / f"cut{n}-torn"
            lost += _power_cut(data, worker.pid, image, torn, rng)
            images += [image, torn]
            time.sleep(rng.uniform(0.3, 1.2))
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    assert len(images) >= 4
    stages = []
    for image in images:
        report = check(image / "quire.db", image / "quire_vecs.db")
        assert report.ok, (SEED, image.name, report.problems)
        stages += [j["stage"] for j in _jobs(image) if j["status"] == "running"]
        # Restart: a worker sweeps what the cut left half-done and finishes every job.
        name, dim = _vec_meta(image)
        settings = Settings(data_dir=image, job_stale_s=0.01, worker_poll_s=0.05)
        restarted = Worker(settings, embedder=StubEmbedder(name, dim))
        time.sleep(0.05)  # the copied heartbeats are now older than job_stale_s
        restarted.run(drain=True)
        restarted.close()
        _assert_whole(image, n_docs)
    assert lost > 0, "no torn image lost anything"
    print(
        f"\nseed {SEED}: {len(images)} power-cut images ({lost} WAL bytes torn off), "
        f"running stages {stages}"
    )
