"""``quire mcp`` over stdio, driven by the official MCP client as a desktop assistant would:
every tool and resource on a real library, progress and cancellation of ``ask`` with the fake
Ollama as the LLM, bad input answered with error results, and ingest of what is allowed
(files in a folder, downloads under a URL prefix) and nothing else."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from quire.config import Settings
from quire.ingest.worker import Worker
from quire.storage.migrate import open_database
from tests.conftest import DOCS
from tests.fakes.chat import Reply
from tests.fakes.ollama import FakeOllama
from tests.fakes.rag_model import RagModel
from tests.fakes.server import ThreadedServer
from tests.mcp.conftest import copy_library
from tests.mcp.helpers import (
    Progress,
    check_every_tool,
    documents_by_file,
    eventually,
    failed,
    ok,
    run,
    stdio,
)

pytestmark = pytest.mark.slow
QUESTION = "What did the White Rabbit take out of its waistcoat-pocket?"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["llama3.2:latest"]) as server:
        yield server


def stored_links(library: Path) -> Callable[[int, int], str]:
    """Over stdio the assistant runs on this machine: a link is the stored original's file
    URI, at the page."""
    db = open_database(Settings(data_dir=library))
    with db.read() as conn:
        paths = dict(conn.exec_driver_sql("SELECT id, stored_path FROM documents").all())
    db.dispose()
    return lambda document_id, page: f"{Path(paths[document_id]).as_uri()}#page={page}"


def test_every_tool_and_resource_over_stdio(mcp_library: Path) -> None:
    async def main() -> None:
        async with stdio(mcp_library) as client:
            assert client.server_info is not None and client.server_info.name == "quire"
            assert "citation" in (client.instructions or "")
            await check_every_tool(client, stored_links(mcp_library))

    run(main)


def test_ask_reports_each_llm_stage_as_progress(mcp_library: Path, fake: FakeOllama) -> None:
    fake.reset()
    fake.responder = RagModel()
    env = {"QUIRE_LLM_BACKENDS": "ollama", "QUIRE_OLLAMA_URL": fake.url, "QUIRE_LLM_RETRIES": "0"}

    async def main() -> None:
        async with stdio(mcp_library, **env) as client:
            progress = Progress()
            answer = ok(
                await client.call_tool("ask", {"question": QUESTION}, progress_callback=progress)
            )
            assert answer["mode"] == "llm" and answer["model"].startswith("ollama:llama3.2")
            assert answer["extractive_reason"] is None and answer["citations"]
            assert all(f"[{n}]" in answer["answer"] for n in answer["citations"])
            assert {s["kind"] for s in answer["sources"]} >= {"epub"}
            progress.check_rising()
            messages = progress.messages
            assert messages[0] == f"answering with {answer['model']}"
            for stage in (
                "planned a ",
                "found ",
                "reading the passages: batch 1 of ",
                "kept the relevant facts",
                "writing the answer",
                "checking the answer against the question",
                "checked: ok",
            ):
                assert any(m.startswith(stage) for m in messages), (stage, messages)
            assert messages[-1] == "done"

    run(main)
    assert fake.stream_outcomes["completed"] >= 1


def test_cancelling_ask_closes_the_llm_request(mcp_library: Path, fake: FakeOllama) -> None:
    fake.reset()
    long_answer = " ".join(f"w{i}" for i in range(400))  # 20 s of tokens
    fake.responder = RagModel(
        overrides={"answer": lambda _: Reply(long_answer, token_delay_s=0.05)}
    )
    env = {"QUIRE_LLM_BACKENDS": "ollama", "QUIRE_OLLAMA_URL": fake.url, "QUIRE_LLM_RETRIES": "0"}

    async def main() -> None:
        async with stdio(mcp_library, **env) as client:
            progress = Progress()
            outcome: list[object] = []

            async def call() -> None:
                outcome.append(
                    await client.call_tool(
                        "ask", {"question": QUESTION}, progress_callback=progress
                    )
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await eventually(
                    lambda: "writing the answer" in progress.messages, 60, "the answer to start"
                )
                await anyio.sleep(0.5)  # tokens are streaming from the fake now
                tg.cancel_scope.cancel()
            assert outcome == []
            # The client's notifications/cancelled stops the tool, which closes the LLM's
            # HTTP stream long before its 20 s of tokens are over.
            await eventually(
                lambda: fake.stream_outcomes["cancelled"] >= 1, 10, "the LLM stream's close"
            )
            # The server goes on serving this session.
            assert ok(await client.call_tool("search", {"query": "White Rabbit"}))["hits"]

    run(main)
    assert fake.stream_outcomes["cancelled"] == 1


async def _still_serving(client: Client) -> None:
    assert ok(await client.call_tool("search", {"query": "MIL-G-7711", "limit": 1}))["hits"]


def test_bad_input_is_an_error_result_and_the_server_keeps_serving(mcp_library: Path) -> None:
    async def main() -> None:
        async with stdio(mcp_library) as client:
            gid = (await documents_by_file(client))["scan-grumman-175.pdf"]["id"]
            r = await client.call_tool("no_such_tool", {})
            assert "Unknown tool: no_such_tool" in failed(r)
            await _still_serving(client)

            wrong_types = [
                ("search", {"query": "rabbit", "limit": "ten"}, "limit"),
                ("search", {"query": "rabbit", "kinds": ["scroll"]}, "kinds"),
                ("search", {"query": 42}, "query"),
                ("get_page", {"document_id": "one", "page": 1}, "document_id"),
                ("get_page", {"document_id": gid, "page": 0}, "page"),
                ("ask", {"question": "why?", "llm": "perhaps"}, "llm"),
                ("search", {}, "query"),
            ]
            for tool, arguments, field in wrong_types:
                text = failed(await client.call_tool(tool, arguments))
                assert f"Error executing tool {tool}" in text and field in text, text
                await _still_serving(client)

            huge = "rabbit " * 14_286  # 100,002 characters
            text = failed(await client.call_tool("search", {"query": huge}))
            assert "at most 2000 characters" in text
            await _still_serving(client)
            text = failed(await client.call_tool("ask", {"question": huge}))
            assert "at most 8000 characters" in text
            await _still_serving(client)
            text = failed(await client.call_tool("search", {"query": "   "}), "bad_input")
            assert "empty" in text
            await _still_serving(client)

            text = failed(
                await client.call_tool("get_page", {"document_id": gid, "page": 99}), "not_found"
            )
            assert f"document {gid} has no page 99: its pages are 1 to 2" in text
            await _still_serving(client)
            for tool, arguments in (
                ("get_page", {"document_id": 987654, "page": 1}),
                ("search", {"query": "rabbit", "document_ids": [987654]}),
                ("ask", {"question": "rabbit?", "document_ids": [987654]}),
            ):
                text = failed(await client.call_tool(tool, arguments), "not_found")
                assert "987654" in text
                await _still_serving(client)

            text = failed(await client.call_tool("ingest", {"path_or_url": str(DOCS)}), "forbidden")
            assert "switched off" in text
            await _still_serving(client)

            for uri, message in (
                (f"quire://documents/{gid}/pages/99", "no page 99"),
                ("quire://documents/987654", "987654 does not exist"),
                ("quire://documents/x/pages/1", "not a positive whole number"),
                ("quire://nothing/here", "nothing/here"),
            ):
                with pytest.raises(MCPError, match=message):
                    await client.read_resource(uri)
                await _still_serving(client)

    run(main)


def _downloads() -> Starlette:
    """What the ingest test downloads from (127.0.0.1 only)."""
    note = (
        "# Heron notes\n\nThe heron waited by the weir for the eels of October.\n\n"
        "## Where\n\n- the weir\n- the **mill race**\n"
    )

    async def notes(request: Request) -> Response:
        return PlainTextResponse(note, headers={"content-disposition": 'inline; filename="h.md"'})

    return Starlette(
        routes=[
            Route("/allowed/heron.md", notes),
            Route("/allowed/moved", lambda r: RedirectResponse("/allowed/heron.md")),
            Route("/allowed/away", lambda r: RedirectResponse("/private/secret.md")),
            Route("/allowed/missing", lambda r: PlainTextResponse("no", status_code=404)),
            Route("/private/secret.md", notes),
        ]
    )


def test_ingest_adds_allowed_files_and_urls_only(mcp_library: Path, tmp_path: Path) -> None:
    data = copy_library(mcp_library, tmp_path)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(DOCS / "pdf" / "dmca-summary.pdf", inbox / "dmca-again.pdf")  # a duplicate
    (inbox / "kestrel.md").write_text(
        "# Kestrel\n\nThe kestrel hovered over the verge.\n\n## Seen\n\n- *twice*, in May\n"
    )
    (inbox / ".hidden.md").write_text("# Hidden\n\nNot added.\n")
    (inbox / "escape.pdf").symlink_to(DOCS / "pdf" / "naacl06-shinyama.pdf")  # points outside
    server = ThreadedServer(_downloads(), name="downloads").start()
    env = {
        "QUIRE_MCP_INGEST": "true",
        "QUIRE_MCP_INGEST_DIRS": str(inbox),
        "QUIRE_MCP_INGEST_URLS": f"{server.url}/allowed/",
    }

    async def main() -> None:
        async with stdio(data, **env) as client:
            added = ok(await client.call_tool("ingest", {"path_or_url": str(inbox)}))
            by_name = {Path(f["path"]).name: f for f in added["files"]}
            assert set(by_name) == {"dmca-again.pdf", "kestrel.md"}
            assert by_name["dmca-again.pdf"]["status"] == "duplicate"
            kestrel = by_name["kestrel.md"]
            assert kestrel["status"] == "queued" and kestrel["job_status"] == "queued"
            assert kestrel["kind"] == "markdown" and "worker" in added["note"]
            again = ok(await client.call_tool("ingest", {"path_or_url": str(inbox / "kestrel.md")}))
            assert again["files"][0]["status"] == "duplicate"

            url = ok(
                await client.call_tool("ingest", {"path_or_url": f"{server.url}/allowed/moved"})
            )
            assert url["files"][0]["status"] == "queued" and url["files"][0]["kind"] == "markdown"

            for target, code, message in (
                (str(DOCS / "pdf" / "dmca-summary.pdf"), "forbidden", "outside the folders"),
                (str(inbox / "nope.pdf"), "not_found", "no such file"),
                (str(inbox / "escape.pdf"), "forbidden", "outside the folders"),
                (f"{inbox}/../inbox/../../", "forbidden", "outside the folders"),
                (f"{server.url}/private/secret.md", "forbidden", "not under a URL prefix"),
                (f"{server.url}/allowed/away", "forbidden", "redirected to"),
                (f"{server.url}/allowed/missing", "fetch_failed", "HTTP 404"),
                ("https://example.invalid/paper.pdf", "forbidden", "not under a URL prefix"),
            ):
                text = failed(await client.call_tool("ingest", {"path_or_url": target}), code)
                assert message in text, text

            docs = await documents_by_file(client)
            assert docs["kestrel.md"]["status"] == "queued"
            assert docs["h.md"]["source"] == f"url:{server.url}/allowed/moved"
            assert docs["kestrel.md"]["source"] == f"path:{inbox / 'kestrel.md'}"

            # The worker (another process in real life) reads the queue; then both are found.
            worker = Worker(Settings(data_dir=data))
            await anyio.to_thread.run_sync(lambda: worker.run(drain=True))
            worker.close()
            hits = ok(await client.call_tool("search", {"query": "kestrel hovered"}))["hits"]
            assert hits[0]["title"] == "Kestrel" and hits[0]["citation"] == "Kestrel, Kestrel"
            hits = ok(await client.call_tool("search", {"query": "heron weir eels"}))["hits"]
            assert hits[0]["title"] == "Heron notes"

    try:
        run(main, timeout=180)
    finally:
        server.stop()
