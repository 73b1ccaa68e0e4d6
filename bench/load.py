"""Load benchmark: concurrent search and chat clients while the worker ingests a big PDF.

    .venv/bin/python bench/load.py                       # ~3 min: 20 clients, a 200-page PDF
    .venv/bin/python bench/load.py --clients 8 --pages 30 --duration 20 --no-save

Starts nginx, `quire serve` and `quire worker` on 127.0.0.1 as `make run` does (free ports, a
temporary data directory, an API token), ingests the shared documents, then measures:
- **idle**: one client, search only, nothing else running;
- **busy**: the same ``--clients`` clients and mix as the load phase, for ``--busy-seconds``,
  with nothing ingesting: what the clients cost each other, so that load ÷ busy is what the
  ingest costs the searches;
- **load**: ``--clients`` concurrent clients (search, and ``--chat-share`` of extractive chat
  answers read to their end) while the worker ingests a generated ``--pages``-page PDF; until
  the ingest ends, or ``--duration`` seconds, or ``--max-requests`` requests.
Reported: requests, errors, "database is locked" (in responses and in both processes' logs),
p50/p95 latency of search (idle vs load) and of whole chat answers, and the ingest time of the
PDF under load. Loopback only; every loop is bounded. Results are appended to
bench/results/load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.e2e.stack import run_stack  # noqa: E402

from common import DOCS, RESULTS_DIR, append_record, machine_info  # noqa: E402
from ingest import make_big_pdf  # noqa: E402

RESULTS = RESULTS_DIR / "load.json"
SEED_FILES = [
    DOCS / "epub" / "alice-epub3.epub",
    DOCS / "pdf" / "dmca-summary.pdf",
    DOCS / "perplexity" / "pnw-states-multiturn.md",
]
QUERIES = [
    "safe harbor for service providers",
    "White Rabbit waistcoat pocket",
    "circumvention of technological protection measures",
    "largest city in Washington state",
    "Alice falls down the rabbit hole",
    "notice and takedown procedure",
    "segmentation of pages into chunks",
    "Oregon capital Salem",
]
QUESTIONS = [
    "What did the White Rabbit take out of its waistcoat-pocket?",
    "What are the conditions for the safe harbor for service providers?",
    "Which Pacific Northwest state has the largest population?",
]
LOCKED = "database is locked"
TOKEN = "load-benchmark-token-0123456789"


@dataclass
class Server:
    url: str
    data: Path
    logs: list[Path]
    headers: dict[str, str]


@contextlib.contextmanager
def serve(workdir: Path) -> Iterator[Server]:
    """nginx → `quire serve`, and `quire worker`, on 127.0.0.1 (the test suite's launcher)."""
    with run_stack(workdir, QUIRE_API_TOKEN=TOKEN, QUIRE_LLM_BACKENDS="none") as stack:
        yield Server(stack.web, stack.data, [stack.log], {"Authorization": f"Bearer {TOKEN}"})


def upload(server: Server, path: Path) -> int:
    """Upload one file; returns its document id."""
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=120) as http:
        r = http.post("/api/documents", files={"files": (path.name, path.read_bytes())})
        r.raise_for_status()
        return int(r.json()["files"][0]["document_id"])


def document(server: Server, doc_id: int) -> dict[str, Any]:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as http:
        r = http.get(f"/api/documents/{doc_id}")
        r.raise_for_status()
        body: dict[str, Any] = r.json()
        return body


def wait_ready(server: Server, ids: list[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [document(server, i)["status"] for i in ids]
        if "failed" in states:
            raise RuntimeError(f"a document failed: {states}")
        if all(s == "ready" for s in states):
            return
        time.sleep(0.5)
    raise RuntimeError(f"documents {ids} not ready after {timeout:.0f} s")


@dataclass
class Tally:
    """Latencies in ms by kind, and what went wrong."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {"search": [], "chat": []})
    errors: list[str] = field(default_factory=list)
    locked: int = 0
    requests: int = 0

    def record_error(self, what: str) -> None:
        self.errors.append(what[:300])
        self.locked += LOCKED in what


async def _search(http: httpx.AsyncClient, query: str, tally: Tally) -> None:
    t0 = time.perf_counter()
    r = await http.post("/api/search", json={"query": query, "limit": 10})
    ms = (time.perf_counter() - t0) * 1000
    tally.requests += 1
    if r.status_code != 200 or not r.json().get("hits"):
        tally.record_error(f"search {r.status_code}: {r.text}")
        return
    tally.latencies["search"].append(ms)


async def _chat(http: httpx.AsyncClient, question: str, tally: Tally) -> None:
    t0 = time.perf_counter()
    last_event, body = "", ""
    async with http.stream("POST", "/api/chat", json={"message": question, "llm": False}) as r:
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                last_event = line[7:]
            elif line.startswith("data: "):
                body = line[6:]
    ms = (time.perf_counter() - t0) * 1000
    tally.requests += 1
    if r.status_code != 200 or last_event != "done":
        tally.record_error(f"chat {r.status_code} {last_event}: {body}")
        return
    tally.latencies["chat"].append(ms)


async def _client(
    server: Server,
    tally: Tally,
    stop: asyncio.Event,
    max_requests: int,
    chat_share: float,
    rng: random.Random,
) -> None:
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=120) as http:
        while not stop.is_set() and tally.requests < max_requests:
            try:
                if rng.random() < chat_share:
                    await _chat(http, rng.choice(QUESTIONS), tally)
                else:
                    await _search(http, rng.choice(QUERIES), tally)
            except httpx.HTTPError as exc:
                tally.requests += 1
                tally.record_error(f"{type(exc).__name__}: {exc}")


async def idle_phase(server: Server, requests: int) -> Tally:
    """Search only, one client, nothing else running."""
    tally = Tally()
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=60) as http:
        for i in range(requests):
            await _search(http, QUERIES[i % len(QUERIES)], tally)
    return tally


async def load_phase(
    server: Server,
    doc_id: int | None,
    *,
    clients: int,
    duration: float,
    max_requests: int,
    chat_share: float,
    seed: int,
) -> tuple[Tally, float, dict[str, Any]]:
    """``clients`` concurrent clients until the document is ingested (or the bounds); with no
    document, for ``duration`` seconds."""
    tally = Tally()
    stop = asyncio.Event()
    rngs = [random.Random(seed + i) for i in range(clients)]
    t0 = time.monotonic()
    tasks = [
        asyncio.create_task(_client(server, tally, stop, max_requests, chat_share, rngs[i]))
        for i in range(clients)
    ]
    doc: dict[str, Any] = {}
    while time.monotonic() - t0 < duration and tally.requests < max_requests:
        if doc_id is not None:
            doc = await asyncio.to_thread(document, server, doc_id)
            if doc["status"] in ("ready", "failed"):
                break
        await asyncio.sleep(0.5)
    ingest_s = time.monotonic() - t0
    stop.set()
    await asyncio.gather(*tasks)
    return tally, ingest_s, doc


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def summary(tally: Tally) -> dict[str, Any]:
    return {
        "requests": tally.requests,
        "errors": len(tally.errors),
        "locked": tally.locked,
        "error_samples": tally.errors[:5],
        **{
            f"{kind}_{name}": round(v, 1) if (v := pct(lat, q)) is not None else None
            for kind, lat in tally.latencies.items()
            for name, q in (("p50", 50), ("p95", 95))
        },
        "search_n": len(tally.latencies["search"]),
        "chat_n": len(tally.latencies["chat"]),
    }


def log_problems(server: Server) -> dict[str, int]:
    text = "\n".join(p.read_text(errors="replace") for p in server.logs if p.exists())
    return {"locked_in_logs": text.count(LOCKED), "tracebacks_in_logs": text.count("Traceback")}


def run(
    workdir: Path,
    *,
    clients: int = 20,
    pages: int = 200,
    duration: float = 240,
    max_requests: int = 20_000,
    chat_share: float = 0.2,
    idle_requests: int = 40,
    busy_seconds: float = 30,
    seed: int = 7,
    seed_files: list[Path] | None = None,
) -> dict[str, Any]:
    """Start the stack in ``workdir``, seed a library, measure idle then under load."""
    with serve(workdir) as server:
        ids = [upload(server, f) for f in (SEED_FILES if seed_files is None else seed_files)]
        wait_ready(server, ids, 600)
        idle = asyncio.run(idle_phase(server, idle_requests))
        mix = {"clients": clients, "max_requests": max_requests, "chat_share": chat_share}
        busy, _, _ = asyncio.run(load_phase(server, None, duration=busy_seconds, seed=seed, **mix))
        big = make_big_pdf(workdir / f"big-{pages}.pdf", pages)
        t_upload = time.monotonic()
        doc_id = upload(server, big)
        tally, load_s, doc = asyncio.run(
            load_phase(server, doc_id, duration=duration, seed=seed, **mix)
        )
        during_load = doc.get("status")
        # Then without load, until the PDF is in (bounded): did the ingest survive the load?
        while doc.get("status") not in ("ready", "failed") and time.monotonic() - t_upload < 900:
            time.sleep(0.5)
            doc = document(server, doc_id)
        ingest_s = time.monotonic() - t_upload
        problems = log_problems(server)
    load = summary(tally)
    return {
        "clients": clients,
        "pages": pages,
        "chat_share": chat_share,
        "idle": summary(idle),
        "busy": summary(busy),
        "busy_seconds": busy_seconds,
        "load": load,
        "ingest": {
            "status": doc.get("status"),
            "status_when_load_ended": during_load,
            "seconds": round(ingest_s, 1),
            "chunks": doc.get("chunk_count"),
            "error": doc.get("error"),
        },
        "load_seconds": round(load_s, 1),
        "throughput_rps": round(tally.requests / load_s, 1) if load_s else None,
        **problems,
    }


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.0f}"


def print_table(r: dict[str, Any]) -> None:
    print(
        f"{'phase':<8}{'requests':>9}{'errors':>8}{'locked':>8}"
        f"{'search p50/p95 ms':>20}{'chat p50/p95 ms':>18}"
    )
    for phase in ("idle", "busy", "load"):
        s = r[phase]
        search = f"{_fmt(s['search_p50'])} / {_fmt(s['search_p95'])}"
        chat = f"{_fmt(s['chat_p50'])} / {_fmt(s['chat_p95'])}"
        print(f"{phase:<8}{s['requests']:>9}{s['errors']:>8}{s['locked']:>8}{search:>20}{chat:>18}")
    i = r["ingest"]
    print(
        f"{r['clients']} clients for {r['load_seconds']} s, {r['throughput_rps']} req/s, while a "
        f"{r['pages']}-page PDF ingested ({i['status_when_load_ended']} when the load ended; "
        f"{i['status']} {i['seconds']} s after upload, {i['chunks']} chunks); "
        f"'{LOCKED}' in logs: {r['locked_in_logs']}, tracebacks: {r['tracebacks_in_logs']}"
    )
    idle, busy, load = (r[k]["search_p95"] for k in ("idle", "busy", "load"))
    if idle and busy and load:
        print(
            f"search p95 during the ingest: {load / idle:.1f}x idle (one client), "
            f"{load / busy:.1f}x the same {r['clients']} clients with nothing ingesting"
        )
    for sample in (*r["busy"]["error_samples"], *r["load"]["error_samples"]):
        print(f"  error: {sample}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--pages", type=int, default=200, help="pages of the PDF ingested")
    parser.add_argument("--duration", type=float, default=240, help="longest load phase, s")
    parser.add_argument("--max-requests", type=int, default=20_000)
    parser.add_argument("--chat-share", type=float, default=0.2)
    parser.add_argument("--idle-requests", type=int, default=40)
    parser.add_argument(
        "--busy-seconds", type=float, default=30, help="the same clients, nothing ingesting"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="working directory to keep (default: temporary)")
    parser.add_argument("--no-save", action="store_true", help="do not append to the results")
    args = parser.parse_args()
    load_avg = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="quire-load-") as tmp:
        results = run(
            args.keep or Path(tmp),
            clients=args.clients,
            pages=args.pages,
            duration=args.duration,
            max_requests=args.max_requests,
            chat_share=args.chat_share,
            idle_requests=args.idle_requests,
            busy_seconds=args.busy_seconds,
            seed=args.seed,
        )
    print_table(results)
    if args.no_save:
        return
    entry = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(load_avg),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "results": results,
    }
    append_record(RESULTS, entry, indent=1)
    print(f"appended to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
