"""Formatting for the benchmark pages: numbers, tables, dates, the machine and the command of a
run. The renderers (bench_renderers.py) build rows as ``{column: cell}`` dicts."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

Run = dict[str, Any]
Lines = list[str]
Row = dict[str, str]


def get(data: Any, *keys: str) -> Any:
    """``data[k1][k2]…``, or None where a key is missing (older runs recorded less)."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def num(value: Any, digits: int = 1) -> str:
    """A number for a table: thousands separated, ``–`` when not measured."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def p50_p95(stats: Any, digits: int = 1) -> str:
    """``p50 / p95`` of a ``{"p50": …, "p95": …}`` record."""
    if not isinstance(stats, dict) or stats.get("p50") is None:
        return "–"
    return f"{num(stats['p50'], digits)} / {num(stats.get('p95'), digits)}"


def pair(record: Any, prefix: str) -> str:
    """``p50 / p95`` of the keys ``<prefix>_p50`` and ``<prefix>_p95`` of a record."""
    return p50_p95({"p50": get(record, f"{prefix}_p50"), "p95": get(record, f"{prefix}_p95")})


def ratio(a: Any, b: Any) -> str:
    """``a ÷ b`` as ``12.3×``."""
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not b:
        return "–"
    return f"{a / b:.1f}×"


def cell(text: str) -> str:
    """Text safe inside a markdown table cell: ``|`` escaped outside code spans (Python-Markdown
    keeps a code span's ``|`` and would show the backslash), ``<`` as an entity."""
    parts = text.replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = parts[i].replace("|", "\\|").replace("<", "&lt;")
    return "`".join(parts).strip()


def table(rows: Iterable[Row]) -> Lines:
    """A markdown table of rows that share their keys (the first row's keys are the header)."""
    rows = list(rows)
    if not rows:
        return []
    header = list(rows[0])
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
        *("| " + " | ".join(cell(row.get(h, "")) for h in header) + " |" for row in rows),
        "",
    ]


def when(run: Run) -> str:
    """The run's date as ``2026-12-02 01:30 UTC`` (``date`` or ``created``)."""
    stamp = run.get("date") or run.get("created")
    if not stamp:
        return "date not recorded"
    return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M UTC")


def newest_first(runs: list[Run]) -> list[Run]:
    """Runs by date, newest first; undated runs keep their order (appended = newer)."""
    return sorted(
        reversed(runs), key=lambda r: r.get("date") or r.get("created") or "", reverse=True
    )


def machine_line(machine: Any) -> str:
    """CPUs, load average, memory, platform and versions, as recorded."""
    if not isinstance(machine, dict):
        return f"Machine: {machine or 'not recorded'} (CPU count and load not recorded)."
    parts = [f"{machine['cpus']} CPUs"] if machine.get("cpus") else []
    if machine.get("load_avg_at_start") is not None:
        end = machine.get("load_avg_at_end")
        at_end = f", {end:.2f} at end" if end is not None else ""
        parts.append(f"load {machine['load_avg_at_start']:.2f} at start{at_end}")
    if machine.get("memory_gb"):
        parts.append(f"{machine['memory_gb']} GB memory")
    if machine.get("platform"):
        parts.append(str(machine["platform"]))
    if machine.get("python"):
        parts.append(f"Python {machine['python']}")
    if machine.get("onnxruntime"):
        parts.append(f"ONNX Runtime {machine['onnxruntime']}")
    return "Machine: " + " · ".join(parts) + "."


def command(script: str, args: dict[str, Any] | None, skip: Iterable[str] = ()) -> str:
    """The command line that the recorded argparse arguments stand for."""
    if args is None:
        return f".venv/bin/python {script}   # arguments not recorded"
    parts = [".venv/bin/python", script]
    for key, value in args.items():
        if key in {"out", "no_save", *skip} or value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif isinstance(value, list):
            parts += [flag, *(str(v) for v in value)]
        elif isinstance(value, dict):  # bench/pageqa.py's --set KEY=VALUE
            parts += [f"{flag} {k}={v}" for k, v in value.items()]
        elif isinstance(value, float) and value.is_integer():
            parts += [flag, str(int(value))]
        elif isinstance(value, str) and (" " in value or not value):
            parts += [flag, json.dumps(value)]
        else:
            parts += [flag, str(value)]
    return " ".join(parts)


def run_header(run: Run, cmd: str, title: str | None = None) -> Lines:
    """A run's heading (its date unless given), its command and its machine."""
    heading = title or when(run)
    return [f"### {heading}", "", "```sh", cmd, "```", "", machine_line(run.get("machine")), ""]
