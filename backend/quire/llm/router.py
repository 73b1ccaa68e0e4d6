"""Several chat backends in the configured order: the first healthy one answers.

    router = make_router(settings)                     # None when no LLM is configured
    if router is not None and await router.available():
        reply = router.stream(messages, purpose="answer")
        async for delta in reply:
            ...
        reply.label                                    # "ollama:llama3.2": who answered

The router holds no per-call state: which backend answered is the reply's, so answers that
run at the same time each know their own.

Failover: a backend that fails before its first delta (down, timeout, HTTP error, model not
pulled) hands the call to the next one; once a delta has been yielded a failure is raised as
``LLMInterrupted``, since the caller has already shown the text.

Health: each backend's ``check()`` is cached for ``health_ttl_s``, and a call that fails for a
server-side reason marks its backend down until then too, so a dead server costs one timeout per
TTL rather than one per request. A call that succeeds marks its backend up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from quire.config import Settings
from quire.errors import LLMInterrupted, LLMModelNotPulled, LLMUnavailable
from quire.llm.base import ChatBackend, Message, ModelInfo, Purpose, backend_label
from quire.llm.choice import routed
from quire.llm.ollama import OllamaChat
from quire.llm.openai import OpenAIChat

log = logging.getLogger(__name__)


@dataclass
class _Health:
    ok: bool
    error: str | None
    at: float
    code: str | None = None  # the error's code (llm_model_not_pulled: the server is up)
    models: list[ModelInfo] = field(default_factory=list)


def _server_fault(exc: LLMUnavailable) -> bool:
    """False for a request the server rejected (4xx): the server itself is fine."""
    return exc.retryable or isinstance(exc, LLMModelNotPulled | LLMInterrupted)


async def _aclose(stream: AsyncIterator[str]) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()


class Reply:
    """The deltas of one routed call, and the backend that produced them (once one has)."""

    def __init__(self, deltas: Callable[[Reply], AsyncGenerator[str, None]]) -> None:
        self.backend: ChatBackend | None = None
        self._deltas = deltas(self)

    @property
    def label(self) -> str | None:
        """``backend`` as ``ollama:llama3.2`` (None before any delta)."""
        return backend_label(self.backend) if self.backend is not None else None

    def __aiter__(self) -> Reply:
        return self

    async def __anext__(self) -> str:
        return await self._deltas.__anext__()

    async def aclose(self) -> None:
        """Stop the call (closes the backend's HTTP response)."""
        await self._deltas.aclose()


class LLMRouter:
    """Routes each call to the first healthy backend; see the module docstring."""

    def __init__(
        self,
        backends: Sequence[ChatBackend],
        *,
        health_ttl_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not backends:
            raise ValueError("LLMRouter needs at least one backend")
        self.backends = list(backends)
        self.health_ttl_s = health_ttl_s
        self._clock = clock
        self._health: dict[int, _Health] = {}
        self._locks = [asyncio.Lock() for _ in self.backends]

    async def available(self) -> list[ChatBackend]:
        """The backends that are up, in order (checked at most once per TTL each)."""
        healthy = await asyncio.gather(*(self._healthy(i) for i in range(len(self.backends))))
        return [b for b, ok in zip(self.backends, healthy, strict=True) if ok]

    async def status(self) -> list[dict[str, Any]]:
        """One dict per backend: name, url, model, ok, error and the models it serves."""
        await self.available()
        rows = []
        for i, backend in enumerate(self.backends):
            health = self._health[i]
            rows.append(
                {
                    "name": backend_label(backend),
                    "url": str(getattr(backend, "url", "")),
                    "model": backend.model,
                    "ok": health.ok,
                    "error": health.error,
                    "code": health.code,
                    "models": [m.name for m in health.models],
                }
            )
        return rows

    async def missing_model(self) -> ChatBackend | None:
        """When no backend answers because its server lacks the model: that backend (its
        ``model`` is what to pull); None when the servers are down or answer."""
        rows = await self.status()
        missing = [
            b
            for b, r in zip(self.backends, rows, strict=True)
            if r.get("code") == LLMModelNotPulled.code
        ]
        return missing[0] if missing else None

    def stream(
        self,
        messages: Sequence[Message],
        *,
        purpose: Purpose = "other",
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Reply:
        """Deltas from the first backend that answers; LLMUnavailable if none does."""
        return Reply(
            lambda reply: self._deltas(
                reply,
                messages,
                purpose=purpose,
                json_mode=json_mode,
                max_tokens=max_tokens,
                temperature=temperature,
            )
        )

    async def _deltas(
        self,
        reply: Reply,
        messages: Sequence[Message],
        *,
        purpose: Purpose,
        json_mode: bool,
        max_tokens: int | None,
        temperature: float | None,
    ) -> AsyncGenerator[str, None]:
        failures: list[str] = []
        for i, backend in enumerate(self.backends):
            label = backend_label(backend)
            if not await self._healthy(i):
                failures.append(f"{label}: {self._health[i].error}")
                continue
            deltas = backend.stream(
                messages,
                purpose=purpose,
                json_mode=json_mode,
                max_tokens=max_tokens,
                temperature=temperature,
            )
            started = False
            try:
                async for delta in deltas:
                    if not started:
                        started = True
                        reply.backend = backend
                    yield delta
            except LLMUnavailable as e:
                if _server_fault(e):
                    self._set(i, ok=False, error=e.message, code=e.code)
                if started:
                    if isinstance(e, LLMInterrupted):
                        raise
                    raise LLMInterrupted(e.message, detail=e.detail) from e
                log.warning("%s failed for a %s call: %s", label, purpose, e.message)
                failures.append(f"{label}: {e.message}")
                continue
            finally:
                await _aclose(deltas)
            reply.backend = backend
            self._set(i, ok=True, error=None)
            return
        raise LLMUnavailable(
            "no language model answered: " + "; ".join(failures), detail={"failures": failures}
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        purpose: Purpose = "other",
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> str:
        """The whole reply of the first backend that answers."""
        parts = self.stream(
            messages,
            purpose=purpose,
            json_mode=json_mode,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        return "".join([part async for part in parts])

    async def context_window(self) -> int:
        """The smallest context of the backends that are up (of all, when none is): a prompt
        sized to it fits whichever of them answers."""
        backends = await self.available() or self.backends
        return min([await b.context_window() for b in backends])

    async def aclose(self) -> None:
        """Close every backend's connections."""
        for backend in self.backends:
            with contextlib.suppress(Exception):
                await backend.aclose()

    async def __aenter__(self) -> LLMRouter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _healthy(self, i: int) -> bool:
        if (health := self._fresh(i)) is not None:
            return health.ok
        async with self._locks[i]:  # one check at a time; the others wait for its answer
            if (health := self._fresh(i)) is not None:
                return health.ok
            backend = self.backends[i]
            try:
                models = await backend.check()
            except LLMUnavailable as e:
                log.warning("%s is not usable: %s", backend_label(backend), e.message)
                self._set(i, ok=False, error=e.message, code=e.code)
                return False
            self._set(i, ok=True, error=None, models=models)
            return True

    def _fresh(self, i: int) -> _Health | None:
        health = self._health.get(i)
        if health is not None and self._clock() - health.at < self.health_ttl_s:
            return health
        return None

    def _set(
        self,
        i: int,
        *,
        ok: bool,
        error: str | None,
        models: list[ModelInfo] | None = None,
        code: str | None = None,
    ) -> None:
        known = self._health.get(i)
        if models is None:
            models = known.models if known is not None else []
        self._health[i] = _Health(ok=ok, error=error, at=self._clock(), models=models, code=code)


def make_router(settings: Settings) -> LLMRouter | None:
    """The router of ``QUIRE_LLM_BACKENDS``, with the model picked in Settings (llm/choice.py)
    first; None when no backend is configured."""
    settings = routed(settings)
    backends: list[ChatBackend] = []
    for kind in settings.llm_backend_names:
        if kind == "ollama":
            backends.append(
                OllamaChat(
                    settings.ollama_url,
                    settings.ollama_chat_model,
                    connect_timeout_s=settings.llm_connect_timeout_s,
                    first_token_timeout_s=settings.llm_first_token_timeout_s,
                    idle_timeout_s=settings.llm_idle_timeout_s,
                    num_ctx_max=settings.llm_num_ctx_max,
                    retries=settings.llm_retries,
                )
            )
        elif kind == "openai" and settings.openai_url:
            key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
            backends.append(
                OpenAIChat(
                    settings.openai_url,
                    settings.openai_model,
                    api_key=key or None,
                    context_tokens=settings.openai_context_tokens,
                    connect_timeout_s=settings.llm_connect_timeout_s,
                    first_token_timeout_s=settings.llm_first_token_timeout_s,
                    idle_timeout_s=settings.llm_idle_timeout_s,
                    retries=settings.llm_retries,
                )
            )
    return LLMRouter(backends) if backends else None
