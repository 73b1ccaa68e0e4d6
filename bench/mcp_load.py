"""MCP load check: concurrent MCP clients searching over Streamable HTTP during an ingest.

    .venv/bin/python bench/mcp_load.py                  # ~1 min: 10 clients x 20 searches
    .venv/bin/python bench/mcp_load.py --clients 4 --searches 10 --pages 30 --no-save

Starts nginx, `quire serve` and `quire worker` on 127.0.0.1 as `make run` does (free ports, a
temporary data directory, an API token), with a small library (the Grumman scan, the DMCA
summary, Alice). Then:
- **idle**: one MCP client, ``--searches`` searches, nothing else running;
- **load**: ``--clients`` MCP clients at once (each its own session, the SDK's client through
  nginx's /mcp with the token), ``--searches`` ``search`` tool calls each, while the worker
  ingests a generated ``--pages``-page PDF uploaded just before.
An error is a failed call, an error result or a search without hits. Reported: calls, errors,
p50/p95/max latency per phase, whether the PDF was still being ingested when the load ended,
and "database is locked" / tracebacks in the servers' log. Loopback only; the calls are bounded
in number and the run in time (``--timeout``). Appended to bench/results/mcp.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.e2e.stack import Stack, run_stack  # noqa: E402
from tests.mcp.helpers import over_http  # noqa: E402

from common import DOCS, RESULTS_DIR, append_record, build_library, machine_info  # noqa: E402
from ingest import make_big_pdf  # noqa: E402
from quire.config import Settings  # noqa: E402

RESULTS = RESULTS_DIR / "mcp.json"
TOKEN = "mcp-load-benchmark-token-0123456789"
LIBRARY = [
    DOCS / "pdf" / "scan-grumman-175.pdf",
    DOCS / "pdf" / "dmca-summary.pdf",
    DOCS / "epub" / "alice-epub3.epub",
]
QUERIES = [
    "MIL-G-7711",
    "weight increase of the oversize tire kit",
    "safe harbor for service providers",
    "White Rabbit waistcoat pocket",
    "circumvention of technological protection measures",
    "nose gear fork thrust bearing",
    "Alice falls down the rabbit hole",
    "notice and takedown procedure",
]
LOCKED = "database is locked"


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.latencies_ms) + len(self.errors)


async def _searches(url: str, n: int, offset: int, tally: Tally) -> None:
    """One MCP client (its own session): ``n`` search calls, one after another."""
    try:
        async with over_http(url, TOKEN) as client:
            for i in range(n):
                query = QUERIES[(offset + i) % len(QUERIES)]
                t0 = time.perf_counter()
                try:
                    result = await client.call_tool("search", {"query": query, "limit": 10})
                except Exception as exc:  # noqa: BLE001 - counted, the others go on
                    tally.errors.append(f"{type(exc).__name__}: {exc}"[:300])
                    continue
                ms = (time.perf_counter() - t0) * 1000
                hits = (result.structured_content or {}).get("hits")
                if result.is_error or not hits:
                    tally.errors.append(f"{query!r}: {result.content}"[:300])
                else:
                    tally.latencies_ms.append(ms)
    except Exception as exc:  # noqa: BLE001 - a session that could not start is n errors
        tally.errors.extend([f"session: {type(exc).__name__}: {exc}"[:300]] * n)


async def _phase(url: str, clients: int, searches: int, timeout: float) -> tuple[Tally, float]:
    tally = Tally()
    t0 = time.monotonic()
    with anyio.fail_after(timeout):
        async with anyio.create_task_group() as tg:
            for c in range(clients):
                tg.start_soon(_searches, url, searches, c, tally)
    return tally, time.monotonic() - t0


def _status(stack: Stack, doc_id: int) -> str:
    r = httpx.get(
        f"{stack.web}/api/documents/{doc_id}", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    r.raise_for_status()
    return str(r.json()["status"])


def _pct(values: list[float], q: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _summary(tally: Tally, seconds: float) -> dict[str, Any]:
    lat = tally.latencies_ms
    return {
        "calls": tally.calls,
        "errors": len(tally.errors),
        "error_samples": tally.errors[:5],
        "p50_ms": round(v, 1) if (v := _pct(lat, 50)) is not None else None,
        "p95_ms": round(v, 1) if (v := _pct(lat, 95)) is not None else None,
        "max_ms": round(max(lat), 1) if lat else None,
        "seconds": round(seconds, 1),
        "calls_per_s": round(tally.calls / seconds, 1) if seconds else None,
    }


def run(
    workdir: Path, *, clients: int, searches: int, pages: int, timeout: float
) -> dict[str, Any]:
    """Seed a library, start the stack on it, measure idle, then under load during an ingest."""
    build_library(Settings(data_dir=workdir / "data", llm_backends="none"), LIBRARY)
    big = make_big_pdf(workdir / f"big-{pages}.pdf", pages)
    with run_stack(workdir, QUIRE_API_TOKEN=TOKEN, QUIRE_LLM_BACKENDS="none") as stack:
        url = f"{stack.web}/mcp"
        idle, idle_s = asyncio.run(_phase(url, 1, searches, timeout))
        with httpx.Client(base_url=stack.web, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            r = http.post("/api/documents", files={"files": (big.name, big.read_bytes())})
            r.raise_for_status()
            doc_id = int(r.json()["files"][0]["document_id"])
        load, load_s = asyncio.run(_phase(url, clients, searches, timeout))
        during = _status(stack, doc_id)
        deadline = time.monotonic() + timeout  # then let the ingest finish (bounded)
        status = during
        while status not in ("ready", "failed") and time.monotonic() < deadline:
            time.sleep(0.5)
            status = _status(stack, doc_id)
        log = stack.log.read_text(errors="replace")
    return {
        "clients": clients,
        "searches_per_client": searches,
        "pages": pages,
        "idle": _summary(idle, idle_s),
        "load": _summary(load, load_s),
        "ingest": {"status_when_load_ended": during, "status": status},
        "locked_in_logs": log.count(LOCKED),
        "tracebacks_in_logs": log.count("Traceback"),
    }


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.0f}"


def print_table(r: dict[str, Any]) -> None:
    print(f"{'phase':<7}{'clients':>8}{'calls':>7}{'errors':>8}{'p50 ms':>8}{'p95 ms':>8}"
          f"{'max ms':>8}{'calls/s':>9}")  # fmt: skip
    for phase, clients in (("idle", 1), ("load", r["clients"])):
        s = r[phase]
        print(
            f"{phase:<7}{clients:>8}{s['calls']:>7}{s['errors']:>8}{_fmt(s['p50_ms']):>8}"
            f"{_fmt(s['p95_ms']):>8}{_fmt(s['max_ms']):>8}{s['calls_per_s']:>9}"
        )
    i = r["ingest"]
    print(
        f"during the load a {r['pages']}-page PDF was being ingested: "
        f"{i['status_when_load_ended']} when the load ended, then {i['status']}; "
        f"'{LOCKED}' in logs: {r['locked_in_logs']}, tracebacks: {r['tracebacks_in_logs']}"
    )
    for sample in r["load"]["error_samples"]:
        print(f"  error: {sample}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--searches", type=int, default=20, help="search calls per client")
    parser.add_argument("--pages", type=int, default=120, help="pages of the PDF ingested")
    parser.add_argument("--timeout", type=float, default=300, help="bound of each phase, s")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    load_avg = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="quire-mcp-load-") as tmp:
        result = run(
            Path(tmp),
            clients=args.clients,
            searches=args.searches,
            pages=args.pages,
            timeout=args.timeout,
        )
    print_table(result)
    if not args.no_save:
        record = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": " ".join(["bench/mcp_load.py", *sys.argv[1:]]),
            "machine": machine_info(load_avg),
            **result,
        }
        append_record(RESULTS, record)
        print(f"appended to {RESULTS.relative_to(ROOT)}")
    if result["load"]["errors"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
