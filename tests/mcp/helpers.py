"""Driving Quire's MCP server with the official SDK's client: over stdio (``quire mcp`` as a
subprocess) or over HTTP (the API's /mcp), and the checks both transports share."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextResourceContents

from tests.e2e.helpers import env_for

T = TypeVar("T")
TOOLS = {"search", "ask", "get_page", "list_documents", "list_notes", "ingest"}


def run(main: Callable[[], Awaitable[T]], timeout: float = 120) -> T:
    """Run ``main`` in a fresh event loop, bounded in time."""

    async def bounded() -> T:
        with anyio.fail_after(timeout):
            return await main()

    return asyncio.run(bounded())


def stdio(data: Path, **env: str) -> Client:
    """A client that launches ``quire mcp`` on ``data`` (no LLM unless ``env`` sets one), as a
    desktop assistant does: the initialize handshake, then requests."""
    settings = {"QUIRE_LLM_BACKENDS": "none", "QUIRE_LOG_LEVEL": "WARNING", **env}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "quire", "mcp"], env=env_for(data, **settings)
    )
    return Client(params, mode="legacy")


@asynccontextmanager
async def over_http(
    url: str, token: str | None = None, *, mode: str = "legacy"
) -> AsyncIterator[Client]:
    """A client of the Streamable HTTP endpoint ``url``, sending the bearer ``token``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    timeout = httpx2.Timeout(30, read=300)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def ok(result: CallToolResult) -> dict[str, Any]:
    """A successful result's structured content (its text content is the same JSON)."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = result.content[0]
    assert text.type == "text" and json.loads(text.text) == result.structured_content
    return result.structured_content


def failed(result: CallToolResult, code: str | None = None) -> str:
    """An error result's text; ``code``: the ErrorBody's code in its structured content."""
    assert result.is_error, result.structured_content
    text = result.content[0]
    assert text.type == "text"
    if code is not None:
        assert result.structured_content is not None, text.text
        assert result.structured_content["error"]["code"] == code, result.structured_content
        assert text.text.startswith(f"Error ({code}): ")
    return text.text


class Progress:
    """A progress callback that keeps what it was told, and when."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((time.monotonic(), progress, total, message))

    @property
    def messages(self) -> list[str]:
        return [m or "" for *_, m in self.seen]

    def check_rising(self) -> None:
        values = [p for _, p, _, _ in self.seen]
        assert values and values == sorted(values) and len(set(values)) == len(values), values
        assert values[-1] == 1.0 and all(t == 1.0 for _, _, t, _ in self.seen)


async def eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await anyio.sleep(0.05)


async def documents_by_file(client: Client) -> dict[str, dict[str, Any]]:
    listed = ok(await client.call_tool("list_documents", {}))
    return {d["filename"]: d for d in listed["documents"]}


async def text_of(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    content = result.contents[0]
    assert isinstance(content, TextResourceContents), content
    return content.text


async def check_every_tool(client: Client, link: Callable[[int, int], str]) -> None:
    """Each tool and resource once, asserting on the library's content; ``link(doc, page)``:
    the link expected for a PDF page on this transport."""
    listed = await client.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    for tool in listed.tools:
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.output_schema is not None, tool.name
        params = tool.input_schema["properties"]
        assert params and all(p.get("description") for p in params.values()), tool.name
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert templates == {
        "quire://documents/{document_id}",
        "quire://documents/{document_id}/pages/{page}",
    }

    docs = await documents_by_file(client)
    assert set(docs) == {"scan-grumman-175.pdf", "dmca-summary.pdf", "alice-epub3.epub"}
    grumman = docs["scan-grumman-175.pdf"]
    assert grumman["status"] == "ready" and grumman["page_count"] == 2
    gid = grumman["id"]

    # The identifier on the scan's second page, found by exact match and cited to that page.
    found = ok(await client.call_tool("search", {"query": "MIL-G-7711", "limit": 5}))
    top = found["hits"][0]
    assert (top["document_id"], top["page"], top["kind"]) == (gid, 2, "pdf")
    assert "MIL-G-7711" in top["passage"] and top["page_label"] is None
    assert any("7711" in top["passage"][a:b] for a, b in top["highlights"]), top["highlights"]
    assert top["citation"] == f"{grumman['title']}, p. 2"
    assert top["link"] == link(gid, 2) and top["resource"] == f"quire://documents/{gid}/pages/2"
    weight = ok(await client.call_tool("search", {"query": "weight increase 3.00 Lbs"}))
    assert (weight["hits"][0]["document_id"], weight["hits"][0]["page"]) == (gid, 1)

    only_epub = ok(
        await client.call_tool(
            "search", {"query": "White Rabbit waistcoat-pocket", "kinds": ["epub"], "limit": 3}
        )
    )
    assert only_epub["hits"] and {h["kind"] for h in only_epub["hits"]} == {"epub"}
    first = only_epub["hits"][0]
    assert first["citation"] == f"Alice's Adventures in Wonderland, {first['place']}", first
    assert first["place"] and not first["place"].startswith("section "), first
    assert first["heading_path"].split(" > ")[-1] in first["place"]  # named by its chapter

    page = ok(await client.call_tool("get_page", {"document_id": gid, "page": 1, "context": True}))
    assert "3.00 Lbs." in page["text"] and page["extracted_by"] == "ocr"
    assert page["previous"] is None and page["next"]["page"] == 2
    assert "MIL-G-7711" in page["next"]["text"] and page["link"] == link(gid, 1)

    epubs = ok(await client.call_tool("list_documents", {"kind": "epub"}))["documents"]
    assert [d["filename"] for d in epubs] == ["alice-epub3.epub"]
    assert epubs[0]["origin"] == "upload"  # added by path, as `quire ingest` does
    dmca = ok(await client.call_tool("list_documents", {"text": "MILLENNIUM"}))
    assert [d["filename"] for d in dmca["documents"]] == ["dmca-summary.pdf"]
    pdfs = ok(await client.call_tool("list_documents", {"source": "docs/pdf/", "limit": 1}))
    assert pdfs["total"] == 2 and len(pdfs["documents"]) == 1
    assert ok(await client.call_tool("list_documents", {"status": "failed"}))["total"] == 0

    progress = Progress()
    answer = ok(
        await client.call_tool(
            "ask",
            {"question": "What is the weight increase of the oversize tire kit?", "llm": False},
            progress_callback=progress,
        )
    )
    assert answer["mode"] == "extractive" and answer["model"] is None
    assert "switched off" in answer["extractive_reason"]
    assert "3.00 Lbs" in answer["answer"]
    cited = {s["n"]: s for s in answer["sources"]}
    weight_source = next(s for s in cited.values() if "3.00 Lbs" in s["quote"])
    assert weight_source["citation"] == f"{grumman['title']}, p. 1"
    assert weight_source["n"] in answer["citations"]
    progress.check_rising()
    assert progress.messages[0].startswith("answering extractively")
    assert any(m.startswith("found ") for m in progress.messages)

    assert "MIL-G-7711" in await text_of(client, f"quire://documents/{gid}/pages/2")
    meta = json.loads(await text_of(client, f"quire://documents/{gid}"))
    assert meta["filename"] == "scan-grumman-175.pdf" and meta["status"] == "ready"
    assert [p["page"] for p in meta["pages"]] == [1, 2]
    assert meta["pages"][1]["resource"] == f"quire://documents/{gid}/pages/2"

    refused = failed(
        await client.call_tool("ingest", {"path_or_url": str(Path.home())}), "forbidden"
    )
    assert "QUIRE_MCP_INGEST=true" in refused
