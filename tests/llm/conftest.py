"""One fake Ollama (also speaking OpenAI's /v1) for the package; async tests run on asyncio."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import anyio
import pytest

from tests.fakes import FakeOllama

CHAT_MODEL = "llama3.2"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="package")
def server() -> Iterator[FakeOllama]:
    with FakeOllama(models=["llama3.2:latest", "nomic-embed-text:latest"]) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOllama) -> Iterator[FakeOllama]:
    server.reset()
    server.latency_s = 0.0
    yield server
    server.reset()


async def eventually(predicate: Callable[[], bool], timeout_s: float = 15.0) -> None:
    """Wait until ``predicate()`` holds; fail the test after ``timeout_s`` (generous: with
    three xdist workers on two cores, the fake server's thread can wait seconds for a core)."""
    with anyio.fail_after(timeout_s):
        while not predicate():
            await anyio.sleep(0.01)
