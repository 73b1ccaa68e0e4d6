"""Setting up a chat model: finding a server (the fake Ollama over HTTP), its chat models, the
recommendation for the machine's memory, pulling with progress, and the saved choice."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from quire.config import Settings
from quire.errors import (
    Conflict,
    InputError,
    ModelNotInLibrary,
    NotFound,
    OllamaNotRunning,
    PullFailed,
)
from quire.llm.choice import Choice, read_choice, routed, save_choice
from quire.llm.discover import ChatModel, choose, find_servers, places, pull_target
from quire.llm.pull import PullStep, Tally, check_name, pull_ollama
from quire.llm.recommend import GB, parameters, recommend
from quire.llm.router import make_router
from tests.fakes.ollama import FakeOllama, unused_url

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def quick_pulls(fake: FakeOllama) -> None:
    fake.pull_step_s = 0.0


def settings_for(tmp_path: Path, url: str, **more: str) -> Settings:
    return Settings(data_dir=tmp_path / "data", ollama_url=url, **more)  # type: ignore[arg-type]


# -- discovery --------------------------------------------------------------------------------
async def test_finds_the_server_and_its_chat_models_without_the_embedder(
    fake: FakeOllama, tmp_path: Path
) -> None:
    servers = await find_servers(settings_for(tmp_path, fake.url))
    ours = next(s for s in servers if s.url == fake.url)
    assert ours.ok and ours.backend == "ollama" and ours.version == "0.12.3" and ours.can_pull
    assert [m.name for m in ours.models] == ["llama3.2:latest"]
    assert ours.models[0].parameter_size == "3.2B" and ours.models[0].family == "llama"
    assert ours.embedding_only == ["nomic-embed-text:latest"]
    assert ours.has("llama3.2") is not None and ours.has("qwen2.5:7b") is None


async def test_a_server_too_old_to_list_capabilities_is_judged_by_family(
    fake: FakeOllama, tmp_path: Path
) -> None:
    fake.fail_next(4, status=404, error="not found", path="/api/show")
    servers = await find_servers(settings_for(tmp_path, fake.url))
    ours = next(s for s in servers if s.url == fake.url)
    assert [m.name for m in ours.models] == ["llama3.2:latest"]
    assert ours.embedding_only == ["nomic-embed-text:latest"]  # nomic-bert: an embedder


async def test_places_looked_at_and_a_server_that_is_not_there(tmp_path: Path) -> None:
    down = unused_url()
    settings = settings_for(tmp_path, down, openai_url=down + "/v1")
    assert places(settings) == [
        ("ollama", down),
        ("ollama", "http://127.0.0.1:11434"),
        ("openai", down),
    ]
    servers = await find_servers(settings)
    first = servers[0]
    assert not first.ok and first.error == "no Ollama answers there" and first.models == []
    assert servers[2].error == "no server answers there"
    with pytest.raises(OllamaNotRunning, match="ollama serve"):
        await pull_target(settings, down)


async def test_an_openai_compatible_server_lists_its_models(
    fake: FakeOllama, tmp_path: Path
) -> None:
    settings = settings_for(tmp_path, unused_url(), openai_url=fake.url + "/v1")
    servers = await find_servers(settings)
    openai = next(s for s in servers if s.backend == "openai")
    assert openai.ok and not openai.can_pull
    assert [m.name for m in openai.models] == ["llama3.2:latest"]
    assert openai.embedding_only == ["nomic-embed-text:latest"]  # by its name


# -- recommendation ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("gb", "name"),
    [(4, "qwen2.5:1.5b"), (8, "llama3.2:3b"), (16, "qwen2.5:7b"), (32, "qwen2.5:14b")],
)
def test_the_recommendation_follows_the_memory(gb: int, name: str) -> None:
    pick = recommend(gb * GB)
    assert pick.name == name and not pick.installed and pick.download
    assert f"{gb} GB of memory" in pick.reason and "\n" not in pick.reason


def test_an_installed_model_that_fits_is_preferred_the_largest_of_them() -> None:
    installed = [
        ChatModel("llama3.2:1b", parameter_size="1.2B"),
        ChatModel("llama3.2:latest", parameter_size="3.2B"),
        ChatModel("qwen2.5:14b", parameter_size="14.8B"),  # too big for 8 GB
    ]
    pick = recommend(8 * GB, installed)
    assert pick.name == "llama3.2:latest" and pick.installed and pick.download is None
    assert "already installed" in pick.reason and "3.2B" in pick.reason
    assert recommend(4 * GB, installed[2:]).name == "qwen2.5:1.5b"  # nothing fits: a download
    unknown = recommend(None)
    assert unknown.name == "llama3.2:3b" and "could not be read" in unknown.reason
    remote = recommend(16 * GB, (), "http://gpu-box:11434")
    assert "the model runs on gpu-box: choose by its memory" in remote.reason
    assert "runs on" not in recommend(16 * GB, (), "http://127.0.0.1:11434").reason


def test_parameters_from_the_details_the_name_or_the_size() -> None:
    assert parameters(ChatModel("x", parameter_size="137M")) == pytest.approx(0.137)
    assert parameters(ChatModel("qwen2.5:7b")) == 7.0
    assert parameters(ChatModel("mystery", size=int(4.7e9))) == pytest.approx(7.6, abs=0.1)
    assert parameters(ChatModel("mystery")) is None


# -- pulling ----------------------------------------------------------------------------------
async def test_a_pull_streams_progress_then_the_model_can_chat(fake: FakeOllama) -> None:
    steps = [s async for s in pull_ollama(fake.url, "qwen2.5:3b")]
    assert steps[0].status == "pulling manifest" and steps[-1].done
    weights = [s for s in steps if s.total and s.total > 1000]
    fractions = [s.fraction for s in weights]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    assert any(0 < (f or 0) < 1 for f in fractions) and fractions == sorted(fractions)
    tally = Tally()
    totals = [tally.add(s) for s in steps]
    assert totals[-1][0] == totals[-1][1] == weights[0].total + 2 * 96  # with the small layers
    assert [r.body for r in fake.requests_to("/api/pull")] == [
        {"model": "qwen2.5:3b", "stream": True}
    ]
    # Listed now, and it answers.
    tags = httpx.get(f"{fake.url}/api/tags").json()
    assert "qwen2.5:3b" in [m["name"] for m in tags["models"]]
    reply = httpx.post(
        f"{fake.url}/api/chat",
        json={"model": "qwen2.5:3b", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert reply.status_code == 200, reply.text


async def test_an_unknown_model_a_cut_and_no_server_are_said_plainly(fake: FakeOllama) -> None:
    fake.registry = {"qwen2.5:3b"}
    with pytest.raises(ModelNotInLibrary, match="no model called 'llama9:400b'.*ollama.com"):
        _ = [s async for s in pull_ollama(fake.url, "llama9:400b")]
    fake.pull_cut_after = 3
    seen: list[PullStep] = []
    with pytest.raises(PullFailed, match="stopped answering during the pull") as caught:
        async for step in pull_ollama(fake.url, "qwen2.5:3b"):
            seen.append(step)
    assert "pull again" in caught.value.message and "%" in caught.value.message
    assert seen and not seen[-1].done
    assert fake.find_model("qwen2.5:3b") is None  # nothing installed
    with pytest.raises(OllamaNotRunning, match="ollama serve"):
        _ = [s async for s in pull_ollama(unused_url(), "qwen2.5:3b")]
    fake.fail_next(1, status=500, error="disk full", path="/api/pull")
    with pytest.raises(PullFailed, match="refused to pull 'qwen2.5:3b': disk full"):
        _ = [s async for s in pull_ollama(fake.url, "qwen2.5:3b")]


@pytest.mark.parametrize("name", ["", "  ", "rm -rf /", "a" * 201, "x:y:z", "../etc"])
def test_a_name_that_is_not_a_model_name_is_refused(name: str) -> None:
    with pytest.raises(InputError, match="not a model name"):
        check_name(name)


def test_model_names_ollama_takes() -> None:
    for name in ("llama3.2", "qwen2.5:7b", "library/llama3.2:3b", "hf.co/bartowski/x:Q4_K_M"):
        assert check_name(f" {name} ") == name


# -- the choice -------------------------------------------------------------------------------
def test_the_choice_is_applied_first_and_survives_a_restart(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "http://ollama.invalid:1", llm_backends="openai,ollama")
    assert read_choice(settings.data_dir) is None and routed(settings) is settings
    save_choice(settings.data_dir, Choice(backend="ollama", url="http://h:2", model="qwen2.5:3b"))
    applied = routed(settings)
    assert applied.llm_backend_names == ["ollama", "openai"]
    assert (applied.ollama_url, applied.ollama_chat_model) == ("http://h:2", "qwen2.5:3b")
    assert settings.ollama_chat_model == "llama3.2"  # the settings themselves are untouched
    router = make_router(settings)
    assert router is not None and router.backends[0].model == "qwen2.5:3b"
    # Off stays off; an unreadable file is no choice.
    assert routed(settings_for(tmp_path, "http://x:1", llm_backends="none")).llm_backends == "none"
    (settings.data_dir / "llm.json").write_text(json.dumps({"backend": "x"}))
    assert read_choice(settings.data_dir) is None


async def test_choose_needs_the_model_on_a_running_server(fake: FakeOllama, tmp_path: Path) -> None:
    settings = settings_for(tmp_path, fake.url)
    with pytest.raises(NotFound, match="no chat model called 'qwen2.5:7b': pull it first"):
        await choose(settings, "qwen2.5:7b")
    with pytest.raises(NotFound):
        await choose(settings, "nomic-embed-text")  # an embedder cannot write answers
    chosen = await choose(settings, "llama3.2")
    assert chosen == Choice(backend="ollama", url=fake.url, model="llama3.2:latest")
    assert read_choice(settings.data_dir) == chosen
    with pytest.raises(Conflict, match="QUIRE_LLM_BACKENDS=none"):
        await choose(settings_for(tmp_path, fake.url, llm_backends="none"), "llama3.2")
    with pytest.raises(OllamaNotRunning):
        await choose(settings_for(tmp_path, unused_url()), "llama3.2", unused_url())
