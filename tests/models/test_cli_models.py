"""`quire models list|pull|use` against the fake Ollama over HTTP (click's runner, in process)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from quire.cli.models import models_group
from quire.llm.choice import Choice, read_choice
from tests.fakes.ollama import FakeOllama, unused_url


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["nomic-embed-text:latest", "llama3.2:1b"]) as server:
        server.pull_step_s = 0.0
        server.registry = {"qwen2.5:3b"}
        yield server


def run(data: Path, url: str, *args: str) -> Result:
    env = {"QUIRE_DATA_DIR": str(data), "QUIRE_OLLAMA_URL": url, "QUIRE_OPENAI_URL": ""}
    return CliRunner().invoke(models_group, list(args), env=env)


def test_list_pull_and_use(fake: FakeOllama, tmp_path: Path) -> None:
    data = tmp_path / "data"
    listed = run(data, fake.url, "list")
    assert listed.exit_code == 0, listed.output
    assert f"Ollama 0.12.3 at {fake.url}" in listed.output
    assert "llama3.2:1b" in listed.output and "embedding only, left out: nomic-embed-text" in (
        listed.output
    )
    assert "Recommended: " in listed.output

    pulled = run(data, fake.url, "pull", "qwen2.5:3b")
    assert pulled.exit_code == 0, pulled.output
    assert f"qwen2.5:3b is installed in Ollama at {fake.url}" in pulled.output
    assert "quire models use qwen2.5:3b" in pulled.output
    assert fake.find_model("qwen2.5:3b") is not None

    used = run(data, fake.url, "use", "qwen2.5:3b")
    assert used.exit_code == 0, used.output
    assert read_choice(data) == Choice(backend="ollama", url=fake.url, model="qwen2.5:3b")
    as_json = json.loads(run(data, fake.url, "list", "--json").output)
    assert as_json["choice"]["model"] == "qwen2.5:3b"
    assert "qwen2.5:3b" in [m["name"] for m in as_json["servers"][0]["models"]]
    assert run(data, fake.url, "use", "--reset").exit_code == 0
    assert read_choice(data) is None


def test_errors_say_what_to_do(fake: FakeOllama, tmp_path: Path) -> None:
    data = tmp_path / "data"
    unknown = run(data, fake.url, "pull", "llama9:400b")
    assert unknown.exit_code != 0 and "no model called 'llama9:400b'" in unknown.output
    missing = run(data, fake.url, "use", "qwen2.5:14b")
    assert missing.exit_code != 0 and "quire models pull qwen2.5:14b" in missing.output
    assert read_choice(data) is None
    down = unused_url()
    nothing = run(data, down, "list")
    assert nothing.exit_code == 1
    assert "No language model server is running" in nothing.output
    assert "winget install Ollama.Ollama" in nothing.output and "ollama serve" in nothing.output
    gone = run(data, down, "pull", "qwen2.5:3b", "--url", down)
    assert gone.exit_code != 0 and "ollama serve" in gone.output
