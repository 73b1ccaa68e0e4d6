"""The MCP server over an open library: six tools and two resources, built around a Runtime.

    async with Runtime.open(settings) as rt:
        await build_server(rt).run_stdio_async()        # `quire mcp`; /mcp: mcp/http.py

Every tool answers with a structured result (its model in mcp/schemas.py is the output schema)
and the same JSON as text; a failure is an error result whose text says what went wrong and
whose structured content is the API's ErrorBody. The server keeps serving after any of them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from quire import __version__
from quire.errors import ErrorBody, NotFound, QuireError
from quire.mcp import answers, intake, library, schemas
from quire.mcp.citations import DOCUMENT_URI, PAGE_URI, Links
from quire.retrieval.options import LanguageTag, RetrievalOptions, SearchOptions, Strategy
from quire.retrieval.search import MAX_QUERY_CHARS
from quire.runtime import Runtime
from quire.storage import access
from quire.storage.records import DocumentStatus, Id, Kind
from quire.synthesis.answer import ChatRequest
from quire.synthesis.engine import MAX_MESSAGE_CHARS

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
Quire is the user's own research library: PDFs (scans included), EPUBs, Perplexity threads and
notes, searched with page-exact results. Use `search` to find passages and quote them with their
`citation` string ("Title, p. 12 — Chapter > Section"); `ask` for an answer written from the
library with numbered sources; `get_page` (or the resource quire://documents/{id}/pages/{n}) to
read a cited page whole; `list_documents` to see what is in the library. Page numbers are the
document's own 1-based pages (PDF), sections (EPUB, markdown) or turns (Perplexity)."""

Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="What to look for: keywords, a quoted phrase, an identifier (MIL-G-7711, "
        "a section number) or a question in plain words.",
    ),
]
Question = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_MESSAGE_CHARS,
        description="The question, in plain words, as the user would ask it.",
    ),
]
Kinds = Annotated[
    list[Kind] | None,
    Field(description="Only documents of these kinds (default: all)."),
]
Languages = Annotated[
    list[LanguageTag] | None,
    Field(
        max_length=100,
        description="Only documents in these languages, as tags: en, ja, zh-Hant … "
        "(list_documents shows each document's; default: all).",
    ),
]
DocumentIds = Annotated[
    list[Id] | None,
    Field(max_length=1000, description="Only these documents (ids from list_documents)."),
]
StrategyArg = Annotated[
    Strategy | None,
    Field(
        description="precise (a focused question) or exhaustive (lists, comparisons: a wider "
        "candidate pool); default: chosen from the wording."
    ),
]
DocumentId = Annotated[Id, Field(description="The document's id (from search or list_documents).")]

READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def build_server(rt: Runtime) -> MCPServer[Any]:
    """The server, its tools reading (and, when allowed, adding to) ``rt``'s library."""
    server: MCPServer[Any] = MCPServer(
        name="quire",
        title="Quire",
        version=__version__,
        instructions=INSTRUCTIONS,
    )

    @server.tool(title="Search the library", annotations=READS)
    async def search(
        query: Query,
        ctx: Context,
        kinds: Kinds = None,
        languages: Languages = None,
        document_ids: DocumentIds = None,
        limit: Annotated[int, Field(ge=1, le=50, description="How many hits.")] = 10,
        strategy: StrategyArg = None,
    ) -> Annotated[CallToolResult, schemas.SearchResult]:
        """Hybrid search (keywords, meaning and exact identifiers) over the user's documents.
        Returns the best passages, each with its page, a citation string to quote, the matched
        spans and a link to the original at that page. Use it to find where something is said;
        read a whole page with get_page."""

        def work() -> schemas.SearchResult:
            options = SearchOptions(
                kinds=tuple(kinds or ()),
                languages=tuple(languages or ()),
                document_ids=tuple(document_ids or ()),
                limit=limit,
                strategy=strategy,
            )
            return library.search(rt, query, options, _links(ctx))

        return await _result("search", asyncio.to_thread(work), ctx)

    @server.tool(title="Ask the library", annotations=READS)
    async def ask(
        question: Question,
        ctx: Context,
        kinds: Kinds = None,
        languages: Languages = None,
        document_ids: DocumentIds = None,
        strategy: StrategyArg = None,
        llm: Annotated[
            bool,
            Field(
                description="false: quote the best sentences only (fast, no language model). "
                "Without a reachable model the answer is extractive anyway; "
                "extractive_reason says why."
            ),
        ] = True,
    ) -> Annotated[CallToolResult, schemas.Answer]:
        """Answer a question from the user's documents: search, then a language model writes
        the answer from the passages it found, citing them as [n] (or, without a model, the
        best sentences are quoted). Returns the answer and its numbered sources with page
        citations. Reports progress per stage; cancel it to stop the model."""

        async def report(progress: float, message: str) -> None:
            await ctx.report_progress(progress, 1.0, message)

        async def work() -> schemas.Answer:
            request = ChatRequest(
                message=question,
                options=RetrievalOptions(
                    kinds=tuple(kinds or ()),
                    languages=tuple(languages or ()),
                    document_ids=tuple(document_ids or ()),
                    strategy=strategy,
                ),
                use_llm=llm,
                persist=False,
            )
            return await answers.ask(rt, request, _links(ctx), report)

        return await _result("ask", work(), ctx)

    @server.tool(title="Read a page", annotations=READS)
    async def get_page(
        document_id: DocumentId,
        page: Annotated[
            Id,
            Field(
                description="1-based page (PDF), section (EPUB, markdown), turn (Perplexity) "
                "or part (text), as a search hit or citation gives it."
            ),
        ],
        ctx: Context,
        context: Annotated[
            bool, Field(description="Also return the page before and the page after.")
        ] = False,
    ) -> Annotated[CallToolResult, schemas.Page]:
        """The whole text of one page of a document (a PDF page, an EPUB section, a Perplexity
        turn), with its citation and a link to the original at that page; optionally with the
        pages on either side."""
        return await _result(
            "get_page",
            asyncio.to_thread(
                library.page, rt, document_id, page, context=context, links=_links(ctx)
            ),
            ctx,
        )

    @server.tool(title="List the documents", annotations=READS)
    async def list_documents(
        ctx: Context,
        kind: Annotated[Kind | None, Field(description="Only this kind.")] = None,
        status: Annotated[
            DocumentStatus | None,
            Field(description="Only this status (ready: searchable)."),
        ] = None,
        source: Annotated[
            str | None,
            Field(
                max_length=1000,
                description="Only documents whose source contains this: a folder such as "
                "/home/me/papers, perplexity: (synced threads), url: (downloads), upload.",
            ),
        ] = None,
        text: Annotated[
            str | None,
            Field(
                max_length=1000,
                description="Only documents whose title, author or filename contains this.",
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 100,
    ) -> Annotated[CallToolResult, schemas.DocumentList]:
        """What is in the library: each document's id, title, kind, page count and status
        (newest first), filtered. Ids narrow search and ask to some documents."""
        return await _result(
            "list_documents",
            asyncio.to_thread(
                library.list_documents,
                rt,
                kind=kind,
                status=status,
                source=source,
                text=text,
                limit=limit,
            ),
            ctx,
        )

    @server.tool(title="List my notes", annotations=READS)
    async def list_notes(
        ctx: Context,
        document_id: Annotated[
            Id | None, Field(description="Only the notes on this document.")
        ] = None,
        tag: Annotated[str | None, Field(max_length=200, description="Only this tag.")] = None,
        text: Annotated[
            str | None,
            Field(
                max_length=1000, description="Only notes whose quote, text or tags has these words."
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 100,
        offset: Annotated[
            int, Field(ge=0, description="Skip this many (the last answer's next_offset).")
        ] = 0,
    ) -> Annotated[CallToolResult, schemas.NoteList]:
        """The user's own highlights and notes (and their team's shared ones): the quote, the
        note, its tags and where it is ("your note on p. 45"). Search and ask find them too
        (kind "note")."""
        return await _result(
            "list_notes",
            asyncio.to_thread(
                library.list_notes,
                rt,
                document_id=document_id,
                tag=tag,
                text=text,
                limit=limit,
                offset=offset,
            ),
            ctx,
        )

    @server.tool(
        title="Add to the library",
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=True,
        ),
    )
    async def ingest(
        path_or_url: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4096,
                description="A file or folder on the Quire server's machine, or an http(s) "
                "URL to download (PDF, EPUB, Office files, page images, saved web pages, "
                "Perplexity markdown, md, txt).",
            ),
        ],
        ctx: Context,
    ) -> Annotated[CallToolResult, schemas.IngestResult]:
        """Add a file, a folder's files or a downloaded URL to the library and queue it for
        indexing; returns the documents and their jobs. Off unless the server's owner allows
        it (QUIRE_MCP_INGEST), and only from the folders and URL prefixes they allow."""
        return await _result("ingest", intake.ingest(rt.settings, rt.db, path_or_url), ctx)

    @server.resource(
        DOCUMENT_URI,
        name="document",
        title="A document",
        description="A document's metadata, status and page list (each page with its "
        "citation and resource), as JSON.",
        mime_type="application/json",
    )
    async def document(document_id: str, ctx: Context) -> str:
        return await _resource(ctx, library.document_json, rt, _id(document_id, "document id"))

    @server.resource(
        PAGE_URI,
        name="page",
        title="A page of a document",
        description="The whole text of one page (PDF page, EPUB section, Perplexity turn).",
        mime_type="text/plain",
    )
    async def page(document_id: str, page: str, ctx: Context) -> str:
        return await _resource(
            ctx, library.page_text, rt, _id(document_id, "document id"), _id(page, "page")
        )

    return server


def _links(ctx: Context) -> Links:
    """Links for this request: the API's own URLs over HTTP, the stored files over stdio."""
    base = getattr(ctx.request_context.request, "base_url", None)
    return Links.over_http(str(base)) if base is not None else Links()


def _reader(ctx: Context) -> access.Reader:
    """Who this call reads as: over HTTP, the reader the API's access middleware bound to the
    request (nobody if none was); over stdio, the machine's user, who reads everything."""
    request = ctx.request_context.request
    if request is None:
        return access.EVERYONE
    reader = request.scope.get(access.SCOPE_KEY)
    return reader if isinstance(reader, access.Reader) else access.NOBODY


async def _result(tool: str, work: Awaitable[BaseModel], ctx: Context) -> CallToolResult:
    try:
        # The work runs (and its threads start) inside: they read as this request's reader.
        with access.reading_as(_reader(ctx)):
            out = await work
    except QuireError as exc:
        return _failure(tool, exc.body())
    except answers.AnswerFailed as exc:
        return _failure(tool, exc.body)
    except ValidationError as exc:
        return _failure(tool, ErrorBody(status=400, code="bad_input", message=_first_error(exc)))
    return CallToolResult(
        content=[TextContent(type="text", text=out.model_dump_json())],
        structured_content=out.model_dump(mode="json"),
    )


def _failure(tool: str, body: ErrorBody) -> CallToolResult:
    log.info("mcp %s: %s (%s)", tool, body.message, body.code)
    return CallToolResult(
        content=[TextContent(type="text", text=f"Error ({body.code}): {body.message}")],
        structured_content=schemas.Failure(error=body).model_dump(mode="json"),
        is_error=True,
    )


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else str(err["msg"])


def _id(raw: str, what: str) -> int:
    if not raw.isdigit() or not 1 <= int(raw) < 2**63:
        raise ResourceNotFoundError(f"{what} {raw!r} is not a positive whole number")
    return int(raw)


async def _resource(ctx: Context, read: Any, *args: Any) -> str:
    try:
        with access.reading_as(_reader(ctx)):
            return str(await asyncio.to_thread(read, *args))
    except NotFound as exc:
        raise ResourceNotFoundError(exc.message) from exc
    except QuireError as exc:
        raise ResourceError(exc.message) from exc
