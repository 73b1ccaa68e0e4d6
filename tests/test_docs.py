"""Every setting is documented in the README, and every field of the answer events in
docs/chat-api.md (datasette's test_docs idea)."""

from __future__ import annotations

import re

from pydantic import BaseModel

from quire.config import Settings
from quire.errors import ErrorBody
from quire.retrieval.rerank import RerankReport
from quire.synthesis.events import EVENT_MODELS, Source
from tests.conftest import REPO


def test_every_setting_is_in_the_readme_configuration_table() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    missing = [n for n in Settings.model_fields if f"`QUIRE_{n.upper()}`" not in table]
    assert missing == []


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in (REPO / ".ci" / "run").read_text()
    assert "make test" in (REPO / "README.md").read_text()


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
    models.update({m.__name__: m for m in (Source, ErrorBody, RerankReport)})
    assert set(doc) >= set(models), "a model has no section"
    for name, model in models.items():
        assert doc[name] == set(model.model_fields), (name, doc[name] ^ set(model.model_fields))


def test_a_field_added_to_a_model_and_not_documented_fails_the_check() -> None:
    class Wider(Source):
        isbn: str | None = None

    doc = documented_fields((REPO / "docs" / "chat-api.md").read_text(encoding="utf-8"))
    assert doc["Source"] != set(Wider.model_fields)
