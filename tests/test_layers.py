"""The layer order (pyproject.toml ``[tool.importlinter]``): cli → app → api | mcp |
evaluation | models → runtime → synthesis → retrieval | sources → ingest → formats → embed |
llm | storage → text → config | errors. import-linter checks the real package, and is shown
to catch a bad import. Beside it, the shape the architecture keeps: no module asks which
database it is on outside storage/backends, and no module grows past 500 lines."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint(package_parent: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_parent or ROOT / "backend")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_contract_is_kept() -> None:
    r = lint()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 kept, 0 broken" in r.stdout


def broken_copy(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the package with ``line`` appended to one module."""
    shutil.copytree(ROOT / "backend" / "quire", tmp_path / "quire")
    path = tmp_path / "quire" / module
    path.write_text(path.read_text() + f"\n{line}\n")
    return tmp_path


def test_a_lower_layer_importing_a_higher_one_breaks_the_layers(tmp_path: Path) -> None:
    r = lint(broken_copy(tmp_path, "storage/db.py", "from quire.api import errors  # noqa"))
    assert r.returncode != 0
    assert "Layers: each package imports only the layers below it BROKEN" in r.stdout
    assert "quire.storage.db -> quire.api.errors" in r.stdout


def test_a_cycle_hidden_in_a_function_is_found(tmp_path: Path) -> None:
    bad = "def _late() -> None:\n    from quire.storage import migrate  # noqa"
    r = lint(broken_copy(tmp_path, "storage/db.py", bad))
    assert r.returncode != 0
    assert "No import cycles between sibling modules or packages BROKEN" in r.stdout
    assert "No cycles are allowed in quire.storage" in r.stdout


def test_text_analysis_importing_storage_breaks_the_layers(tmp_path: Path) -> None:
    r = lint(broken_copy(tmp_path, "text/segment.py", "from quire.storage import records  # noqa"))
    assert r.returncode != 0
    assert "quire.text.segment -> quire.storage.records" in r.stdout


def test_a_file_format_reaching_into_the_job_machinery_breaks_the_layers(tmp_path: Path) -> None:
    r = lint(broken_copy(tmp_path, "formats/epub.py", "from quire.ingest import intake  # noqa"))
    assert r.returncode != 0
    assert "quire.formats.epub -> quire.ingest.intake" in r.stdout


#: Asking which database a connection is on: only storage/backends may.
_WHICH_DATABASE = re.compile(r"is_postgres|dialect\.name")


def backend_modules() -> list[Path]:
    return sorted((ROOT / "backend" / "quire").rglob("*.py"))


def test_only_the_storage_backends_ask_which_database_they_are_on() -> None:
    backends = ROOT / "backend" / "quire" / "storage" / "backends"
    asking = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in backend_modules()
        if backends not in path.parents
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _WHICH_DATABASE.search(line)
    ]
    assert asking == []


def test_the_check_finds_a_module_that_asks() -> None:
    assert _WHICH_DATABASE.search('if conn.dialect.name == "postgresql":')
    assert _WHICH_DATABASE.search("if is_postgres(conn):")


def test_no_module_is_over_500_lines() -> None:
    sizes = {
        p.relative_to(ROOT): len(p.read_text(encoding="utf-8").splitlines())
        for p in backend_modules()
    }
    assert {p: n for p, n in sizes.items() if n > 500} == {}
