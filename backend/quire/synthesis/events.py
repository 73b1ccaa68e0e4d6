"""The answer contract: one model per event of an answer's stream, and the numbered Source.

The chat engine yields these; ``/api/chat`` sends each as a Server-Sent Event (``event:`` its
name, ``data:`` the model's JSON, which carries the name too), ``/v1/chat/completions``, the
CLI and the MCP server read their attributes. The models are in the OpenAPI schema, so the web
app's TypeScript types are generated from them, and docs/chat-api.md is checked against them.

    async for event in engine.stream(prepared):             # an Event
        match event:
            case TokenEvent(text=text): print(text, end="")
            case DoneEvent(citations=cited): ...
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, RootModel

from quire.errors import ErrorBody
from quire.retrieval.options import Strategy
from quire.retrieval.planner import Plan
from quire.retrieval.rerank import RerankReport
from quire.storage.records import Kind, Placed
from quire.storage.web_sources import WebSource

AnswerMode = Literal["llm", "extractive"]
Stage = Literal["map", "filter", "answer", "verify"]


class Source(Placed):
    """A numbered source the answer may cite: ``[n]`` in the answer is ``sources[n-1]``."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    n: int = Field(description="The number the answer cites it by.")
    chunk_id: int
    document_id: int
    title: str
    kind: Kind
    filename: str
    page: int = Field(description="1-based page (PDF), section (EPUB) or turn (Perplexity).")
    page_label: str | None = Field(
        default=None,
        description="The printed page label (PDF /PageLabels), e.g. 'xii' or '166'; None when "
        "the PDF has none or it equals the page number",
    )
    heading_path: str
    passage: str = Field(description="The chunk's text.")
    highlights: list[tuple[int, int]] = Field(description="[start, end) query matches in passage.")
    quote: str = Field(description="The fact (LLM) or quoted sentence (extractive) it supports.")
    score: float | None = Field(description="The rerank logit, else the fused score.")
    origin_url: str | None = Field(
        default=None,
        description="The original's own address on the web: a Perplexity thread; a saved web "
        "page with a text fragment (#:~:text=) that scrolls to the quoted passage.",
    )
    web_sources: list[WebSource] = Field(
        default_factory=list,
        description="The web pages the passage's footnote markers cite, by their number in the "
        "turn (Perplexity; empty for other kinds).",
    )
    url: str | None = Field(default=None, description="The original at this page (set by the API).")
    view: str | None = Field(default=None, description="The page's text (set by the API).")


class _Event(BaseModel):
    # The discriminator has a default, and is still required in what is sent: generated
    # clients can then switch on it.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)


class StartEvent(_Event):
    event: Literal["start"] = "start"
    conversation_id: int | None
    user_message_id: int | None
    question: str
    standalone_question: str = Field(description="The question as searched (follow-ups rewritten).")
    mode: AnswerMode
    model: str | None = Field(description="The backend expected to answer, e.g. ollama:llama3.2.")
    notices: list[str]
    extractive_reason: str | None = Field(
        default=None,
        description="Extractive mode: why the answer is quoted rather than written (the LLM "
        "switched off, none set up or reachable); said once, in the answer's first line.",
    )


class PlanEvent(Plan, _Event):
    event: Literal["plan"] = "plan"


class RetrievalEvent(_Event):
    event: Literal["retrieval"] = "retrieval"
    counts: dict[str, int] = Field(description="Hits per leg, and `fused`.")
    timings_ms: dict[str, float] = Field(description="Milliseconds per search stage.")
    notices: list[str]
    hyde_used: bool
    rerank: RerankReport | None
    candidates: int = Field(description="Passages that go on to the answer.")
    strategy: Strategy
    round: int = Field(description="1, or 2 for the round the verification asked for.")


class StageEvent(_Event):
    event: Literal["stage"] = "stage"
    stage: Stage
    done: int
    total: int


class SourcesEvent(_Event):
    """The sources the answer may cite (sent again, extended, after a second round)."""

    event: Literal["sources"] = "sources"
    sources: list[Source]


class TokenEvent(_Event):
    event: Literal["token"] = "token"
    text: str = Field(description="The next piece of the answer (markdown).")


class VerifyEvent(_Event):
    event: Literal["verify"] = "verify"
    status: Literal["ok", "missed-info"]
    suggestion: str | None
    round: int


class DroppedCitation(BaseModel):
    """A citation removed from the answer: its source does not support the claim."""

    n: int = Field(description="The source number that was cited.")
    claim: str = Field(description="What the sentence claimed, without its citation marks.")
    reason: str = Field(description="Why the source does not support it.")


class CitationCheck(BaseModel):
    """How the answer's citations were checked against their sources, and how many held."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    checked: int = Field(description="Citations checked (each [n] of each sentence).")
    kept: int = Field(description="Citations whose source supports the sentence.")
    dropped: int = Field(description="Citations removed from the answer.")
    method: Literal["checked", "verbatim"] = Field(
        description="checked: each compared with its source (LLM answers); verbatim: quoted "
        "from the source word for word, so supported by construction (extractive answers)."
    )
    dropped_citations: list[DroppedCitation] = Field(
        default_factory=list, description="Each removed citation, with its claim and why."
    )


class DoneEvent(_Event):
    event: Literal["done"] = "done"
    message_id: int | None = Field(description="The stored answer (None when not stored).")
    conversation_id: int | None
    answer: str = Field(description="The whole answer, invented and unsupported citations removed.")
    citations: list[int] = Field(description="The source numbers the answer cites.")
    mode: AnswerMode
    model: str | None = Field(description="The backend that answered (None: extractive).")
    notices: list[str]
    extractive_reason: str | None = Field(
        default=None,
        description="Extractive mode: why the answer is quoted rather than written (as in the "
        "start event, or the model that failed before answering).",
    )
    timings_ms: dict[str, float]
    citations_checked: CitationCheck | None = Field(
        default=None, description="The check of every citation against its source."
    )
    status: Literal["complete"] = "complete"


class ErrorEvent(_Event):
    """The answer failed; the partial answer, if any, is stored as ``interrupted``."""

    event: Literal["error"] = "error"
    error: ErrorBody = Field(description="The same object as an HTTP error's `error`.")
    retryable: bool
    message_id: int | None


#: Any event of an answer's stream (what the engine yields).
Event = (
    StartEvent
    | PlanEvent
    | RetrievalEvent
    | StageEvent
    | SourcesEvent
    | TokenEvent
    | VerifyEvent
    | DoneEvent
    | ErrorEvent
)
#: Every event model, in the order a stream sends them.
EVENT_MODELS: tuple[type[BaseModel], ...] = get_args(Event)


class ChatEvent(RootModel[Annotated[Event, Field(discriminator="event")]]):
    """Any event, told apart by its ``event`` name: the stream's schema, and its parser
    (``ChatEvent.model_validate_json(data).root``)."""
