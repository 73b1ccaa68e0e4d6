"""What the HTTP chat backends share: one streamed request per call, retried only before its
first line, a first-token and an idle timeout, and server failures mapped onto quire.errors.

A subclass says where to send (``chat_path``, ``models_path``), what to send (``_body``), how
to read one line of the answer (``_parse``) and one model list (``_models``).

    attempt 1..retries+1:  connect -> status -> first line     (connect error, 5xx, 429, no first
                                                                line in time: try again)
    then, never retried:   line -> line -> ... -> done         (error line, cut, idle timeout)
"""

from __future__ import annotations

import asyncio
import json
import logging
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from quire.errors import LLMInterrupted, LLMModelNotPulled, LLMUnavailable
from quire.llm.base import ChatBackend, Message, ModelInfo, Purpose, Usage, backend_label
from quire.ollama_api import error_message, error_text, json_error

log = logging.getLogger(__name__)

# Listing models is instant on a healthy server: a health check must not hang for minutes.
CHECK_TIMEOUT_S = 10.0


@dataclass
class Line:
    """What one line of a streamed answer says."""

    text: str = ""
    done: bool = False  # the stream ends here
    finish_reason: str | None = None  # the model stopped; the server may still send usage
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_ms: float | None = None


class _Transient(Exception):
    """A failure before the first line: another attempt may succeed."""


def describe(exc: BaseException) -> str:
    """An httpx error as a short phrase (some have an empty ``str``)."""
    return str(exc) or type(exc).__name__


def as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_object(text: str) -> dict[str, Any] | Line:
    """The JSON object a line carries, or the error Line it amounts to."""
    try:
        payload = json.loads(text)
    except ValueError:
        return Line(error=f"unreadable line {text[:120]!r}")
    message = error_message(payload)
    if message is not None:
        return Line(error=message)
    if not isinstance(payload, dict):
        return Line(error=f"unexpected line {text[:120]!r}")
    return payload


class HTTPChat(ChatBackend):
    """A chat backend over ``httpx.AsyncClient``; see the module docstring."""

    name = "http"
    chat_path = ""
    models_path = ""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        connect_timeout_s: float = 5.0,
        first_token_timeout_s: float = 120.0,
        idle_timeout_s: float = 60.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if retries < 0 or min(connect_timeout_s, first_token_timeout_s, idle_timeout_s) <= 0:
            raise ValueError("retries must be >= 0 and timeouts > 0")
        self.url = url.rstrip("/")
        self.model = model
        self.connect_timeout_s = connect_timeout_s
        self.first_token_timeout_s = first_token_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        # Reads are bounded by the first-token and idle timeouts below (asyncio), not by httpx:
        # httpx has one read timeout per request, and the first line may take far longer.
        self._client = httpx.AsyncClient(
            base_url=self.url,
            timeout=httpx.Timeout(None, connect=connect_timeout_s),
            headers=headers,
            transport=transport,
        )
        self._last_usage: Usage | None = None

    # -- what subclasses provide ------------------------------------------------------------
    @property
    def where(self) -> str:
        """The server as error messages name it."""
        return f"the server at {self.url}"

    @abstractmethod
    def _body(
        self,
        messages: Sequence[Message],
        *,
        json_mode: bool,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        """The JSON body of one chat request."""

    @abstractmethod
    def _parse(self, line: str) -> Line | None:
        """One line of the answer; None for lines that carry nothing (keep-alives)."""

    @abstractmethod
    def _models(self, payload: Any) -> list[ModelInfo]:
        """The models in a ``models_path`` body; ValueError if it is not one."""

    @abstractmethod
    def _ensure_model(self, models: list[ModelInfo]) -> None:
        """Raise LLMModelNotPulled unless ``self.model`` is among ``models``."""

    def _model_missing(self, message: str) -> LLMModelNotPulled:
        """The error for a chat request the server answered with 404 and an error body."""
        return LLMModelNotPulled(
            f"{self.where}: {message}", detail={"model": self.model, "url": self.url}
        )

    async def _prepare(self) -> None:
        """Called before each chat request (OpenAIChat learns its model here)."""

    # -- ChatBackend ------------------------------------------------------------------------
    @property
    def label(self) -> str:
        return backend_label(self)

    @property
    def last_usage(self) -> Usage | None:
        return self._last_usage

    async def check(self) -> list[ModelInfo]:
        """The served models; LLMUnavailable / LLMModelNotPulled if ours cannot answer."""
        timeout = httpx.Timeout(CHECK_TIMEOUT_S, connect=self.connect_timeout_s)
        try:
            response = await self._client.get(self.models_path, timeout=timeout)
        except httpx.HTTPError as e:
            raise LLMUnavailable(
                f"{self.where} is unreachable (GET {self.models_path}): {describe(e)}",
                detail={"url": self.url},
            ) from e
        if response.status_code != 200:
            raise LLMUnavailable(
                f"{self.where} answered {response.status_code} to GET {self.models_path}: "
                f"{error_text(response)}",
                detail={"url": self.url, "status": response.status_code},
            )
        try:
            models = self._models(response.json())
        except ValueError as e:
            raise LLMUnavailable(f"{self.where} sent an unreadable {self.models_path}") from e
        self._ensure_model(models)
        return models

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        purpose: Purpose = "other",
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncGenerator[str, None]:
        """Yield text deltas; closing or cancelling the consumer closes the HTTP response."""
        await self._prepare()
        body = self._body(
            messages, json_mode=json_mode, max_tokens=max_tokens, temperature=temperature
        )
        log.debug("%s: %s request (%d messages)", self.label, purpose, len(messages))
        response, lines, first = await self._open(body)
        line: str | None = first
        usage = Usage(backend=self.name, model=self.model)
        yielded = False
        try:
            while True:
                if line is None:
                    if usage.finish_reason is not None:
                        break  # some servers end without their end marker
                    raise self._broken("the stream ended before the model finished", yielded)
                parsed = self._parse(line)
                if parsed is not None:
                    if parsed.error is not None:
                        raise self._broken(parsed.error, yielded)
                    _merge(usage, parsed)
                    if parsed.text:
                        yielded = True
                        yield parsed.text
                    if parsed.done:
                        break
                line = await self._read(lines, yielded)
        finally:
            await response.aclose()
        self._last_usage = usage

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the request ------------------------------------------------------------------------
    async def _open(self, body: dict[str, Any]) -> tuple[httpx.Response, AsyncIterator[str], str]:
        """Send ``body`` and wait for the first line, retrying transient failures."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.retries + 1),
            wait=wait_exponential(multiplier=self.backoff_s, max=self.backoff_s * 8),
            retry=retry_if_exception_type(_Transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return await retrying(self._attempt, body)
        except _Transient as e:
            raise LLMUnavailable(
                f"{self.where} is unavailable (POST {self.chat_path}, "
                f"{self.retries + 1} attempts): {e}",
                detail={"url": self.url, "model": self.model},
            ) from e

    async def _attempt(
        self, body: dict[str, Any]
    ) -> tuple[httpx.Response, AsyncIterator[str], str]:
        request = self._client.build_request("POST", self.chat_path, json=body)
        try:
            async with asyncio.timeout(self.first_token_timeout_s):
                response = await self._client.send(request, stream=True)
                try:
                    if response.status_code != 200:
                        await response.aread()
                        raise self._status_error(response)
                    lines = response.aiter_lines()
                    first = await self._next_line(lines)
                    if first is None:
                        raise _Transient("it closed the stream without a line")
                except BaseException:
                    await response.aclose()
                    raise
        except TimeoutError as e:
            raise _Transient(f"no answer within {self.first_token_timeout_s:g} s") from e
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:
            raise _Transient(f"cannot connect: {describe(e)}") from e
        except httpx.HTTPError as e:  # e.g. the connection dropped before the first line
            raise _Transient(f"connection failed: {describe(e)}") from e
        return response, lines, first

    def _status_error(self, response: httpx.Response) -> Exception:
        status = response.status_code
        if status >= 500 or status == 429:
            return _Transient(f"HTTP {status}: {error_text(response)}")
        if status == 404 and json_error(response) is not None:
            return self._model_missing(error_text(response))
        err = LLMUnavailable(
            f"{self.where} rejected POST {self.chat_path} (HTTP {status}): {error_text(response)}",
            detail={"url": self.url, "status": status},
        )
        err.retryable = False  # the request itself is wrong: another server may take it
        return err

    async def _read(self, lines: AsyncIterator[str], yielded: bool) -> str | None:
        """The next line within the idle timeout; a failure is the stream breaking."""
        try:
            async with asyncio.timeout(self.idle_timeout_s):
                return await self._next_line(lines)
        except TimeoutError:
            raise self._broken(f"no output for {self.idle_timeout_s:g} s", yielded) from None
        except httpx.HTTPError as e:
            raise self._broken(f"connection lost: {describe(e)}", yielded) from e

    @staticmethod
    async def _next_line(lines: AsyncIterator[str]) -> str | None:
        """The next non-blank line, None at the end of the body."""
        async for line in lines:
            if line.strip():
                return line
        return None

    def _broken(self, reason: str, yielded: bool) -> LLMUnavailable:
        if yielded:
            return LLMInterrupted(
                f"{self.label} stopped in the middle of its answer: {reason}",
                detail={"url": self.url, "model": self.model},
            )
        return LLMUnavailable(
            f"{self.where} failed before answering: {reason}",
            detail={"url": self.url, "model": self.model},
        )

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "%s: attempt %d/%d failed, retrying: %s",
            self.label,
            state.attempt_number,
            self.retries + 1,
            exc,
        )


def _merge(usage: Usage, line: Line) -> None:
    """Keep what the server reported; later lines win."""
    if line.finish_reason is not None:
        usage.finish_reason = line.finish_reason
    if line.prompt_tokens is not None:
        usage.prompt_tokens = line.prompt_tokens
    if line.completion_tokens is not None:
        usage.completion_tokens = line.completion_tokens
    if line.total_ms is not None:
        usage.total_ms = line.total_ms
