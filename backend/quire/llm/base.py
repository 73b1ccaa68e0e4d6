"""What the rest of Quire sees of a language model: one async interface, several backends.

    backend = OllamaChat(url, model, ...)            # llm/ollama.py: POST /api/chat, NDJSON
    backend = OpenAIChat(url, model, ...)            # llm/openai.py: /v1/chat/completions, SSE
    router = LLMRouter([ollama, openai])             # llm/router.py: first that answers wins

    async for delta in router.stream(messages, purpose="answer"):
        ...                                          # text pieces as the model writes them
    text = await router.complete(messages, purpose="plan", json_mode=True)
    await router.context_window()                    # tokens a call may use: prompt + reply

Errors (quire.errors): ``LLMUnavailable`` when nothing could be produced (connection refused,
timeout before the first token, HTTP error, ``{"error": ...}`` before any text),
``LLMModelNotPulled`` when the server lacks the model, ``LLMInterrupted`` when the stream broke
after text had been yielded (nothing may be retried then: the caller has shown the text).

Cancelling the consuming task (a browser that disconnects) closes the upstream HTTP response:
backends use ``async with client.stream(...)`` so cancellation propagates into it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypedDict, runtime_checkable

from quire.text.segment import unspaced_runs

Role = Literal["system", "user", "assistant"]
# Why a call is made; backends may use it for logging and per-purpose settings (e.g. a
# smaller max_tokens for plans), and the fake server in the tests uses it nowhere.
Purpose = Literal["plan", "rewrite", "map", "filter", "answer", "verify", "other"]


class Message(TypedDict):
    role: Role
    content: str


@dataclass
class Usage:
    """What the server reported about the last call (None where it said nothing)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_ms: float | None = None
    backend: str = ""
    model: str = ""
    finish_reason: str | None = None  # "stop"; "length" when max_tokens cut the reply


@dataclass
class ModelInfo:
    """A model the backend can serve, as its list endpoint describes it."""

    name: str
    details: dict[str, object] = field(default_factory=dict)


@runtime_checkable
class ChatBackend(Protocol):
    """One LLM server speaking one protocol."""

    name: str  # "ollama" or "openai"
    model: str  # the model requested from it

    async def check(self) -> list[ModelInfo]:
        """The served models; raises LLMUnavailable / LLMModelNotPulled if ours is not usable."""
        ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        purpose: Purpose = "other",
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncIterator[str]:
        """Yield text deltas as they arrive (empty deltas are not yielded)."""
        ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        purpose: Purpose = "other",
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> str:
        """The whole reply; by default ``stream`` joined (classes that subclass inherit it)."""
        deltas = self.stream(
            messages,
            purpose=purpose,
            json_mode=json_mode,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        return "".join([delta async for delta in deltas])

    @property
    def last_usage(self) -> Usage | None:
        """Statistics of the last finished call (Ollama's ``done`` line, OpenAI ``usage``)."""
        ...

    async def context_window(self) -> int:
        """The tokens one call may use, prompt and reply together: the configured size, capped
        by what the server says the model takes (Ollama ``/api/show``, ``/v1/models``)."""
        ...

    async def aclose(self) -> None: ...


def backend_label(backend: ChatBackend) -> str:
    """How logs, errors and the API name a backend: ``ollama:llama3.2``."""
    return f"{backend.name}:{backend.model.removesuffix(':latest')}"


#: Tokens kept for a reply when the caller sets no ``max_tokens`` (an answer, a map batch's
#: facts): what a prompt must leave free of the context.
REPLY_TOKENS = 1024


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A cheap upper-side token estimate: ≈ 3.5 characters per token, one per character of a
    script written without spaces (CJK, Thai: a character is a token or more), plus framing."""
    total = 0
    for m in messages:
        text = m["content"]
        unspaced = sum(len(run) for run in unspaced_runs(text))
        total += (len(text) - unspaced) * 2 // 7 + unspaced + 8
    return total
