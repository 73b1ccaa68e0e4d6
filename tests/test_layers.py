"""The layer order (pyproject.toml ``[tool.importlinter]``): cli → app → api | evaluation →
runtime → synthesis → retrieval → perplexity : ingest → embed | llm | storage → config |
errors. import-linter checks the real package, and is shown to catch a bad import."""

from __future__ import annotations

import os
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
