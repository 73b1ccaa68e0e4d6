"""The documentation pins what it documents (datasette's test_docs idea): every setting has a
description and a row on the site's generated configuration page, every field of the answer
events is in docs/chat-api.md, and the site builds with ``mkdocs build --strict`` (broken links,
anchors, pages missing from the nav, results files without a renderer)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs.hooks import settings_page
from pydantic import BaseModel

from quire.config import Settings
from quire.errors import ErrorBody
from quire.retrieval.rerank import RerankReport
from quire.synthesis.events import EVENT_MODELS, CitationCheck, DroppedCitation, Source
from tests.conftest import REPO


def test_every_setting_is_on_the_generated_configuration_page() -> None:
    rows = {
        line.split(" | ")[0]: line
        for line in settings_page.render().splitlines()
        if line.startswith("| `QUIRE_")
    }
    for name, field in Settings.model_fields.items():
        row = rows.get(f"| `QUIRE_{name.upper()}`")
        assert row is not None, f"QUIRE_{name.upper()} has no row"
        assert field.description, f"QUIRE_{name.upper()} has no description"
        assert row.endswith(f"| {settings_page.cell(field.description)} |"), row


def test_a_setting_without_a_description_fails_the_configuration_page() -> None:
    class Wider(Settings):
        new_knob: int = 1

    with pytest.raises(ValueError, match="QUIRE_NEW_KNOB"):
        settings_page.render(Wider)


def test_ci_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make test" in (REPO / ".ci" / "run").read_text()
    assert "make test" in readme
    assert "make run" in readme


@pytest.mark.slow  # mkdocs builds the whole site
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """About 5 s: the generated pages included (CLI, configuration, benchmark tables)."""
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)]
    r = subprocess.run(build, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "running" / "configuration" / "index.html").is_file()
    assert (tmp_path / "benchmarks" / "retrieval" / "index.html").is_file()


def documented_fields(doc: str) -> dict[str, set[str]]:
    """The field names of each ``### `name` `` section's table in a markdown document."""
    out: dict[str, set[str]] = {}
    for section in re.split(r"^### ", doc, flags=re.MULTILINE)[1:]:
        name = re.match(r"`([\w-]+)`", section)
        if name is None:
            continue
        out[name.group(1)] = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE))
    return out


def test_the_chat_api_doc_lists_exactly_the_fields_of_every_event_model() -> None:
    doc = documented_fields((REPO / "docs" / "chat-api.md").read_text(encoding="utf-8"))
    models: dict[str, type[BaseModel]] = {m.model_fields["event"].default: m for m in EVENT_MODELS}
    models.update(
        {m.__name__: m for m in (Source, ErrorBody, RerankReport, CitationCheck, DroppedCitation)}
    )
    assert set(doc) >= set(models), "a model has no section"
    for name, model in models.items():
        assert doc[name] == set(model.model_fields), (name, doc[name] ^ set(model.model_fields))


def test_a_field_added_to_a_model_and_not_documented_fails_the_check() -> None:
    class Wider(Source):
        isbn: str | None = None

    doc = documented_fields((REPO / "docs" / "chat-api.md").read_text(encoding="utf-8"))
    assert doc["Source"] != set(Wider.model_fields)
