"""Every setting is documented in the README (datasette's test_docs idea)."""

from __future__ import annotations

from quire.config import Settings
from tests.conftest import REPO


def test_every_setting_is_in_the_readme_configuration_table() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    missing = [n for n in Settings.model_fields if f"`QUIRE_{n.upper()}`" not in table]
    assert missing == []


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in (REPO / ".ci" / "run").read_text()
    assert "make test" in (REPO / "README.md").read_text()
