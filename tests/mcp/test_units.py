"""The MCP server's small parts, without processes: citation strings and links, the URL
allow-list, the ingest settings, the client configuration blocks, and the progress mapping."""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from quire.cli import main
from quire.config import Settings
from quire.errors import ErrorBody
from quire.mcp import answers, clients
from quire.mcp.citations import Links, citation, page_uri
from quire.mcp.intake import url_allowed
from quire.synthesis.answer import ChatRequest, Prepared
from quire.synthesis.events import (
    DoneEvent,
    ErrorEvent,
    PlanEvent,
    RetrievalEvent,
    Source,
    SourcesEvent,
    StageEvent,
    StartEvent,
    TokenEvent,
    VerifyEvent,
)
from tests.conftest import REPO


def test_citations_name_the_unit_of_each_kind_and_the_heading_path() -> None:
    assert citation("Parts List", "pdf", 2) == "Parts List, p. 2"
    # A chapter is named by its title, once (docs/design/places.md); a PDF's section follows.
    assert citation("Alice", "epub", 2, "Down The Rabbit-Hole") == "Alice, Down The Rabbit-Hole"
    assert citation("Alice", "epub", 2) == "Alice, section 2"
    assert citation("Parts List", "pdf", 2, "Main Gear", "ii") == (
        "Parts List, p. ii (PDF p. 2) — Main Gear"
    )
    assert citation("Thread", "perplexity", 3) == "Thread, turn 3"
    assert citation("Notes", "markdown", 1, "A > B") == "Notes, B"
    assert citation("Log", "text", 4) == "Log, part 4"
    assert page_uri(7, 12) == "quire://documents/7/pages/12"


def test_links_point_at_the_api_over_http_and_at_the_stored_file_over_stdio(
    tmp_path: Path,
) -> None:
    http = Links.over_http("http://127.0.0.1:8080/")
    assert http.original(3, "pdf", 12) == "http://127.0.0.1:8080/api/documents/3/file#page=12"
    assert http.original(3, "epub", 12) == "http://127.0.0.1:8080/api/documents/3/file"
    assert http.original(3, "note", 12) is None  # the reader's note has no file of its own
    stored = tmp_path / "files" / "ab.pdf"
    assert Links().original(3, "pdf", 2, str(stored)) == f"{stored.as_uri()}#page=2"
    assert Links().original(3, "pdf", 2) is None


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://arxiv.org/pdf/1706.03762", True),
        ("https://arxiv.org/pdf", True),
        ("https://ARXIV.org/pdf/x", True),
        ("https://arxiv.org/pdfx/1", False),  # a prefix is whole path segments
        ("https://arxiv.org/abs/1706.03762", False),
        ("http://arxiv.org/pdf/1", False),  # another scheme
        ("https://arxiv.org.evil.example/pdf/1", False),
        ("https://arxiv.org:8443/pdf/1", False),  # another port
        ("https://user:pw@arxiv.org/pdf/1", False),
        ("https://example.com/anything/at/all", True),
    ],
)
def test_the_url_allow_list_matches_scheme_host_and_whole_path_segments(
    url: str, allowed: bool
) -> None:
    prefixes = ["https://arxiv.org/pdf/", "https://example.com"]
    assert url_allowed(url, prefixes) is allowed


def test_ingest_settings_are_off_by_default_and_checked(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert not settings.mcp_ingest
    assert settings.mcp_ingest_dir_list == [] and settings.mcp_ingest_url_list == []
    settings = Settings(
        data_dir=tmp_path,
        mcp_ingest_dirs=f" {tmp_path}/a/../b , ~ ",
        mcp_ingest_urls=" https://arxiv.org/pdf/ ,http://127.0.0.1:9000/x",
    )
    assert settings.mcp_ingest_dir_list == [(tmp_path / "b").resolve(), Path.home().resolve()]
    assert settings.mcp_ingest_url_list == ["https://arxiv.org/pdf/", "http://127.0.0.1:9000/x"]
    for bad in ("arxiv.org/pdf", "ftp://example.com/", "https://", "https://u@example.com/"):
        with pytest.raises(ValidationError, match="URL prefix"):
            Settings(data_dir=tmp_path, mcp_ingest_urls=bad)


def test_stdio_blocks_launch_this_environments_quire_with_its_settings(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    environ = {
        "QUIRE_LLM_BACKENDS": "ollama",
        "QUIRE_API_TOKEN": "never-printed-0123456789",
        "QUIRE_OPENAI_API_KEY": "sk-never",
        "HOME": "/home/x",
    }
    launch = clients.Launch.here(settings, environ)
    assert launch.args[-1] == "mcp" and Path(launch.command).is_absolute()
    assert launch.env == {"QUIRE_DATA_DIR": str(tmp_path / "data"), "QUIRE_LLM_BACKENDS": "ollama"}
    for client in ("claude-desktop", "cursor"):
        block = json.loads(clients.stdio_config(client, launch))
        assert block == {"mcpServers": {"quire": {**vars(launch)}}}
    vscode = json.loads(clients.stdio_config("vscode", launch))
    assert vscode["servers"]["quire"] == {"type": "stdio", **vars(launch)}
    words = shlex.split(clients.stdio_config("claude-code", launch))
    assert words[:7] == ["claude", "mcp", "add", "--transport", "stdio", "--scope", "user"]
    assert words[words.index("--") + 1 :] == [launch.command, *launch.args]
    assert f"QUIRE_DATA_DIR={tmp_path / 'data'}" in words
    assert "never" not in " ".join(clients.stdio_config(c, launch) for c in clients.CLIENTS)


def test_http_blocks_carry_the_url_and_the_bearer_token() -> None:
    url, token = "http://127.0.0.1:8080/mcp", "tok-0123456789abcdef"
    cursor = json.loads(clients.http_config("cursor", url, token))
    assert cursor == {
        "mcpServers": {"quire": {"url": url, "headers": {"Authorization": f"Bearer {token}"}}}
    }
    vscode = json.loads(clients.http_config("vscode", url, token))
    assert vscode["servers"]["quire"]["headers"] == {"Authorization": "Bearer ${input:quire-token}"}
    assert vscode["inputs"][0]["password"] is True and token not in json.dumps(vscode)
    desktop = json.loads(clients.http_config("claude-desktop", url, token))["mcpServers"]["quire"]
    assert desktop["command"] == "npx" and desktop["args"][:3] == ["-y", "mcp-remote", url]
    assert desktop["args"][3:] == ["--header", "Authorization:${QUIRE_AUTH}"]
    assert desktop["env"] == {"QUIRE_AUTH": f"Bearer {token}"}
    remote = json.loads(clients.http_config("claude-desktop", "http://quire.lan/mcp", None))
    assert "--allow-http" in remote["mcpServers"]["quire"]["args"]
    assert shlex.split(clients.http_config("claude-code", url, token)) == [
        *("claude", "mcp", "add", "--transport", "http", "--scope", "user"),
        *("--header", f"Authorization: Bearer {token}", "quire", url),
    ]
    assert (
        "headers" not in json.loads(clients.http_config("cursor", url, None))["mcpServers"]["quire"]
    )


HTTP = Links.over_http("http://quire.test/")


class _StubEngine:
    """Yields a scripted event stream, as ChatEngine.stream does (an LLM answer, two rounds)."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events
        self.closed = False

    def prepare(self, request: ChatRequest) -> Prepared:
        return Prepared(request, request.message, None, None, [])

    async def stream(self, prepared: Prepared) -> AsyncIterator[Any]:
        try:
            for event in self.events:
                yield event
        finally:
            self.closed = True


def _source(n: int, page: int) -> Source:
    return Source(
        n=n, chunk_id=n, document_id=1, title="Parts List", kind="pdf", filename="p.pdf",
        page=page, heading_path="", passage="WEIGHT INCREASE: 3.00 Lbs.", highlights=[],
        quote="3.00 Lbs.", score=1.0,
    )  # fmt: skip


def test_ask_maps_each_stage_to_rising_progress_and_closes_the_stream() -> None:
    events = [
        StartEvent(conversation_id=None, user_message_id=None, question="q",
                   standalone_question="q", mode="llm", model="ollama:llama3.2", notices=[]),
        PlanEvent(strategy="precise", queries=["q", "q2"]),
        RetrievalEvent(counts={}, timings_ms={}, notices=[], hyde_used=False, rerank=None,
                       candidates=12, strategy="precise", round=1),
        StageEvent(stage="map", done=1, total=2),
        StageEvent(stage="map", done=2, total=2),
        StageEvent(stage="filter", done=1, total=1),
        SourcesEvent(sources=[_source(1, 1)]),
        StageEvent(stage="answer", done=0, total=1),
        TokenEvent(text="It weighs "), TokenEvent(text="3.00 Lbs. [1]"),
        StageEvent(stage="verify", done=0, total=1),
        VerifyEvent(status="missed-info", suggestion="more", round=1),
        RetrievalEvent(counts={}, timings_ms={}, notices=[], hyde_used=False, rerank=None,
                       candidates=3, strategy="precise", round=2),
        SourcesEvent(sources=[_source(1, 1), _source(2, 2)]),
        TokenEvent(text="\n\nMore [2]."),
        DoneEvent(message_id=None, conversation_id=None, answer="It weighs 3.00 Lbs. [1]",
                  citations=[1], mode="llm", model="ollama:llama3.2", notices=[],
                  timings_ms={}),
    ]  # fmt: skip
    engine = _StubEngine(events)
    runtime = SimpleNamespace(engine=engine, sync_llm=lambda: False)
    seen: list[tuple[float, str]] = []

    async def report(progress: float, message: str) -> None:
        seen.append((progress, message))

    answer = asyncio.run(
        answers.ask(runtime, ChatRequest(message="q"), HTTP, report)  # type: ignore[arg-type]
    )
    values = [p for p, _ in seen]
    assert values == sorted(values) and len(set(values)) == len(values) and values[-1] == 1.0
    messages = [m for _, m in seen]
    assert messages[:4] == [
        "answering with ollama:llama3.2",
        "planned a precise search with 2 query variations",
        "found 12 passages",
        "reading the passages: batch 1 of 2",
    ]
    assert "writing the answer" in messages and messages.count("writing the answer") == 2
    assert "searched again: 3 new passages" in messages and "2 sources" in messages
    assert answer.mode == "llm" and answer.extractive_reason is None
    assert [s.citation for s in answer.sources] == ["Parts List, p. 1", "Parts List, p. 2"]
    assert answer.sources[1].link == "http://quire.test/api/documents/1/file#page=2"
    assert engine.closed


def test_an_error_event_fails_the_ask_and_a_cancelled_ask_closes_the_stream() -> None:
    failing = _StubEngine(
        [
            ErrorEvent(
                error=ErrorBody(status=503, code="llm_unavailable", message="down"),
                retryable=True,
                message_id=None,
            )
        ]  # fmt: skip
    )

    async def report(progress: float, message: str) -> None:
        await asyncio.sleep(0)

    async def ask(engine: _StubEngine) -> Any:
        runtime = SimpleNamespace(engine=engine, sync_llm=lambda: False)
        return await answers.ask(runtime, ChatRequest(message="q"), HTTP, report)  # type: ignore[arg-type]

    with pytest.raises(answers.AnswerFailed, match="down") as failed:
        asyncio.run(ask(failing))
    assert failed.value.body.code == "llm_unavailable" and failing.closed

    class Endless(_StubEngine):
        async def stream(self, prepared: Prepared) -> AsyncIterator[Any]:
            try:
                while True:
                    yield TokenEvent(text="w ")
                    await asyncio.sleep(0.01)
            finally:
                self.closed = True

    endless = Endless([])

    async def cancel_soon() -> None:
        task = asyncio.create_task(ask(endless))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    assert endless.closed


def test_print_config_fills_in_this_machines_paths(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"QUIRE_DATA_DIR": str(data), "QUIRE_LLM_BACKENDS": "none", "QUIRE_API_TOKEN": ""}
    r = CliRunner().invoke(main, ["mcp", "--print-config", "claude-desktop"], env=env)
    assert r.exit_code == 0, r.output
    entry = json.loads(r.stdout)["mcpServers"]["quire"]
    assert Path(entry["command"]).is_file() and Path(entry["command"]).name == "quire"
    assert entry["args"] == ["mcp"]
    assert entry["env"]["QUIRE_DATA_DIR"] == str(data)
    assert entry["env"]["QUIRE_LLM_BACKENDS"] == "none"
    assert "claude_desktop_config.json" in r.stderr
    token = "print-config-token-0123456789"
    r = CliRunner().invoke(
        main, ["mcp", "--print-config", "cursor", "--http"], env={**env, "QUIRE_API_TOKEN": token}
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {
        "mcpServers": {
            "quire": {
                "url": "http://127.0.0.1:8080/mcp",
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }
    r = CliRunner().invoke(main, ["mcp", "--print-config", "emacs"], env=env)
    assert r.exit_code == 2 and "claude-desktop" in r.output
    r = CliRunner().invoke(main, ["mcp", "--url", "http://x/mcp"], env=env)
    assert r.exit_code == 2 and "--print-config" in r.output


def test_the_set_up_doc_shows_exactly_what_print_config_prints() -> None:
    doc = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    launch = clients.Launch(
        "/home/you/quire/.venv/bin/quire", ["mcp"], {"QUIRE_DATA_DIR": "/home/you/quire/data"}
    )
    for client in clients.CLIENTS:
        http = clients.http_config(client, "http://127.0.0.1:8080/mcp", "<QUIRE_API_TOKEN>")
        assert clients.stdio_config(client, launch) in doc, client
        assert http in doc, client
    for tool in ("search", "ask", "get_page", "list_documents", "list_notes", "ingest"):
        assert f"| `{tool}` |" in doc
    for name in ("QUIRE_MCP_INGEST", "QUIRE_MCP_INGEST_DIRS", "QUIRE_MCP_INGEST_URLS"):
        assert f"`{name}=" in doc
