"""The MCP server over Streamable HTTP at /mcp of the real API (uvicorn), through nginx as
`make run` serves it, with the API token — and a second API without one: the token guards /mcp
like every route, every tool and resource answers, progress notifications reach the client
while the answer is written (nothing buffers them), and a cancelled ``ask`` closes the LLM's
request."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.api.test_documents import assert_error_shape
from tests.e2e.helpers import QUIRE, env_for, wait_until
from tests.e2e.stack import Stack, free_port, run_stack
from tests.fakes.chat import Reply
from tests.fakes.ollama import FakeOllama
from tests.fakes.rag_model import RagModel
from tests.mcp.conftest import copy_library
from tests.mcp.helpers import Progress, check_every_tool, eventually, failed, ok, over_http, run

pytestmark = pytest.mark.slow
TOKEN = "mcp-http-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
QUESTION = "What did the White Rabbit take out of its waistcoat-pocket?"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["llama3.2:latest"]) as server:
        yield server


@pytest.fixture(scope="module")
def stack(
    mcp_library: Path, tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama
) -> Iterator[Stack]:
    """nginx → uvicorn API (+ worker) with a token, the LLM being the fake Ollama."""
    tmp = tmp_path_factory.mktemp("mcp-stack")
    copy_library(mcp_library, tmp)
    env = {
        "QUIRE_API_TOKEN": TOKEN,
        "QUIRE_LLM_BACKENDS": "ollama",
        "QUIRE_OLLAMA_URL": fake.url,
        "QUIRE_LLM_RETRIES": "0",
    }
    with run_stack(tmp, **env) as running:
        yield running


@pytest.fixture(scope="module")
def open_api(mcp_library: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`quire serve` on the loopback without a token (what a lone desktop user runs)."""
    tmp = tmp_path_factory.mktemp("mcp-open")
    data = copy_library(mcp_library, tmp)
    port = free_port()
    env = env_for(data, QUIRE_LLM_BACKENDS="none", QUIRE_CORS_ORIGINS="http://localhost:5173")
    with (tmp / "api.log").open("ab") as log:
        proc = subprocess.Popen(
            [*QUIRE, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{url}/api/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, 60, "the API")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _links(base: str) -> object:
    return lambda document_id, page: f"{base}/api/documents/{document_id}/file#page={page}"


def test_without_the_token_mcp_is_refused_like_every_route(stack: Stack) -> None:
    for base in (stack.web, stack.api):
        for headers in ({}, {"Authorization": "Bearer not-the-token-at-all"}):
            r = httpx.post(f"{base}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})
            assert r.status_code == 401, r.text
            assert_error_shape(r.json(), 401, "unauthorized")
            assert r.headers["www-authenticate"].startswith("Bearer")
        for method in ("GET", "DELETE"):
            assert httpx.request(method, f"{base}/mcp").status_code == 401
    assert httpx.get(f"{stack.web}/mcp/").status_code == 401  # the slash too, through nginx

    async def client_without_token() -> None:
        async with over_http(f"{stack.web}/mcp"):
            pass

    # The SDK's client gives up at the handshake (its error does not say why; the 401 does).
    with pytest.raises(ExceptionGroup) as refused:
        run(client_without_token, timeout=30)
    assert refused.group_contains(MCPError, depth=None)


def test_a_web_page_cannot_drive_mcp(stack: Stack) -> None:
    r = httpx.post(
        f"{stack.web}/mcp",
        json=INITIALIZE,
        headers={**MCP_HEADERS, **AUTH, "Origin": "https://evil.example"},
    )
    assert r.status_code == 403
    assert_error_shape(r.json(), 403, "forbidden")
    assert "QUIRE_CORS_ORIGINS" in r.json()["error"]["message"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_every_tool_through_nginx_with_the_token(stack: Stack, mode: str) -> None:
    async def main() -> None:
        async with over_http(f"{stack.web}/mcp", TOKEN, mode=mode) as client:
            await check_every_tool(client, _links(stack.web))  # type: ignore[arg-type]
            found = ok(await client.call_tool("search", {"query": "MIL-G-7711", "limit": 1}))
            link = found["hits"][0]["link"]
        async with httpx.AsyncClient(headers=AUTH) as http:
            original = await http.get(link.split("#")[0])
        assert original.status_code == 200 and original.content.startswith(b"%PDF")

    run(main)


def test_progress_reaches_the_client_while_the_answer_is_written(
    stack: Stack, fake: FakeOllama
) -> None:
    fake.reset()
    words = [f"word{i}" for i in range(10)]
    fake.responder = RagModel(
        overrides={"answer": lambda _: Reply(" ".join(words) + " [1].", token_delay_s=0.2)}
    )

    async def main() -> float:
        async with over_http(f"{stack.web}/mcp", TOKEN) as client:
            progress = Progress()
            answer = ok(
                await client.call_tool("ask", {"question": QUESTION}, progress_callback=progress)
            )
            returned = time.monotonic()
        assert answer["mode"] == "llm" and answer["answer"].startswith("word0 word1")
        progress.check_rising()
        assert any(m.startswith("reading the passages") for m in progress.messages)
        writing = next(t for t, _, _, m in progress.seen if m == "writing the answer")
        return returned - writing

    # The notification came through nginx when the answer began, ~2 s of tokens before the end.
    assert run(main) > 1.5


def test_cancelling_ask_over_http_closes_the_llm_request(stack: Stack, fake: FakeOllama) -> None:
    fake.reset()
    long_answer = " ".join(f"w{i}" for i in range(400))
    fake.responder = RagModel(
        overrides={"answer": lambda _: Reply(long_answer, token_delay_s=0.05)}
    )

    async def main() -> None:
        async with over_http(f"{stack.web}/mcp", TOKEN) as client:
            progress = Progress()
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await client.call_tool(
                        "ask", {"question": QUESTION}, progress_callback=progress
                    )

                tg.start_soon(call)
                await eventually(
                    lambda: "writing the answer" in progress.messages, 60, "the answer to start"
                )
                await anyio.sleep(0.5)
                tg.cancel_scope.cancel()
            await eventually(
                lambda: fake.stream_outcomes["cancelled"] >= 1, 10, "the LLM stream's close"
            )
            assert ok(await client.call_tool("search", {"query": "White Rabbit"}))["hits"]
            assert "switched off" in failed(
                await client.call_tool("ingest", {"path_or_url": "/tmp"}), "forbidden"
            )

    run(main)
    assert fake.stream_outcomes["cancelled"] == 1


def test_without_a_token_configured_mcp_serves_the_loopback(open_api: str) -> None:
    async def main() -> None:
        async with over_http(f"{open_api}/mcp") as client:
            await check_every_tool(client, _links(open_api))  # type: ignore[arg-type]

    run(main)
    # A web page is refused unless its origin is one QUIRE_CORS_ORIGINS allows.
    for origin, status in (("https://evil.example", 403), ("http://localhost:5173", 200)):
        r = httpx.post(
            f"{open_api}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Origin": origin}
        )
        assert r.status_code == status, r.text
