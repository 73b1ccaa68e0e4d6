"""How fast the link fetcher refuses hostile answers, and how much a 500 MB body sends first.

    PYTHONPATH=. .venv/bin/python bench/fetch_limits.py [--limit-mb 3] [--timeout-s 1.5]

Runs the tests' local site on 127.0.0.1 (tests/web/server.py: real saved pages and PDFs, a body
that never ends, 500 MB streamed, a 64 MB gzip bomb, a redirect loop) and fetches each path once
with the real fetcher (web/fetch.py), printing a Markdown table: outcome, wall and CPU time, and
for the 500 MB body what the server had sent when the fetcher hung up. Nothing is written.
"""

from __future__ import annotations

import argparse
import io
import resource
import tempfile
import time
from pathlib import Path

from tests.web.server import Site

from quire.config import Settings
from quire.errors import QuireError
from quire.web.fetch import Fetcher

PATHS = (
    "/pdf/ethereum-yellowpaper-shanghai.pdf",
    "/html/readability-pixnet.html",
    "/gzipped/readability-wikipedia-mozilla.html",
    "/hops/4",
    "/huge",
    "/huge-declared",
    "/bomb",
    "/forever",
    "/loop/a",
    "/to-private",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit-mb", type=int, default=3)
    parser.add_argument("--timeout-s", type=float, default=1.5)
    args = parser.parse_args()
    site = Site().start()
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp(prefix="fetch-bench-")),
        fetch_allow_hosts="127.0.0.1",
        fetch_timeout_s=args.timeout_s,
        max_upload_mb=args.limit_mb,
    )
    print(f"limit {args.limit_mb} MB, {args.timeout_s:g} s\n")
    print("| path | outcome | wall s | CPU s | note |")
    print("| --- | --- | --- | --- | --- |")
    try:
        with Fetcher(settings) as fetcher:
            for path in PATHS:
                out = io.BytesIO()
                wall, cpu = time.perf_counter(), time.process_time()
                try:
                    fetched = fetcher.fetch(site.url(path), out)
                    outcome = f"{fetched.size / 1024:.0f} kB, {len(fetched.redirects)} redirects"
                except QuireError as exc:
                    outcome = exc.code
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                note = ""
                if path == "/huge":
                    time.sleep(0.3)  # the server notices the hang-up
                    note = f"server sent {site.sent['huge'] / 2**20:.1f} MB of 500"
                print(f"| `{path}` | {outcome} | {wall:.2f} | {cpu:.2f} | {note} |")
    finally:
        site.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process (site included): {rss:.0f} MB")


if __name__ == "__main__":
    main()
