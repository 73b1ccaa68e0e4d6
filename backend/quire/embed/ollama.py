"""Embeddings from an Ollama server (``POST /api/embed``), e.g. ``nomic-embed-text``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from quire.embed.base import Vectors, check_texts, l2_normalise
from quire.errors import EmbedderUnavailable, ModelNotPulled
from quire.ollama_api import bare_model, error_text, json_error, pull_hint, tag_names

log = logging.getLogger(__name__)


class _Transient(Exception):
    """A failure worth another try: connection error, timeout or HTTP 5xx."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class OllamaEmbedder:
    """Embeds through Ollama's ``/api/embed`` in batches; checks ``/api/tags`` on first use."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        timeout_s: float = 120.0,
        batch_size: int = 64,
        attempts: int = 4,
        backoff_s: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if batch_size < 1 or attempts < 1:
            raise ValueError("batch_size and attempts must be >= 1")
        self.url = url.rstrip("/")
        self.model = model
        self.batch_size = batch_size
        self.attempts = attempts
        self.backoff_s = backoff_s
        self._client = httpx.Client(
            base_url=self.url,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            transport=transport,
        )
        self._dim: int | None = None
        self._checked = False
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"ollama:{bare_model(self.model)}"

    @property
    def dim(self) -> int:
        """The vector size; learned from the first response (embeds a probe if none yet)."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def check(self) -> None:
        """Fail unless Ollama answers and has the model (ModelNotPulled says how to pull it)."""
        response = self._call("GET", "/api/tags")
        if response.status_code != 200:
            raise EmbedderUnavailable(
                f"Ollama at {self.url} answered {response.status_code} to /api/tags: "
                f"{error_text(response)}"
            )
        try:
            names = tag_names(response.json())
        except ValueError as e:
            raise EmbedderUnavailable(f"Ollama at {self.url} sent unreadable /api/tags") from e
        if bare_model(self.model) not in names:
            raise ModelNotPulled(
                f"Ollama at {self.url} does not have the model {self.model!r}: "
                f"{pull_hint(self.model)}",
                detail={"model": self.model, "available": sorted(names)},
            )
        self._checked = True

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches of ``batch_size``; rows L2-normalised, in input order."""
        items = check_texts(texts)
        with self._lock:
            if not self._checked:
                self.check()
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        parts = [
            self._embed_batch(items[i : i + self.batch_size])
            for i in range(0, len(items), self.batch_size)
        ]
        return l2_normalise(np.concatenate(parts))

    def _embed_batch(self, batch: list[str]) -> Vectors:
        response = self._call("POST", "/api/embed", json={"model": self.model, "input": batch})
        if response.status_code == 404 and json_error(response) is not None:
            raise ModelNotPulled(
                f"Ollama at {self.url}: {error_text(response)}: {pull_hint(self.model)}",
                detail={"model": self.model},
            )
        if response.status_code == 404:  # a plain "404 page not found": no such endpoint
            err = EmbedderUnavailable(
                f"Ollama at {self.url} has no /api/embed (added in Ollama 0.3.0): upgrade it",
                detail={"status": 404},
            )
            err.retryable = False
            raise err
        if response.status_code != 200:
            err = EmbedderUnavailable(
                f"Ollama at {self.url} rejected /api/embed ({response.status_code}): "
                f"{error_text(response)}",
                detail={"status": response.status_code},
            )
            err.retryable = False  # a 4xx says the request itself is wrong
            raise err
        try:
            body: Any = response.json()
            if isinstance(body, dict) and "error" in body:
                raise EmbedderUnavailable(f"Ollama at {self.url}: {body['error']}")
            vectors = np.asarray(body["embeddings"], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as e:
            raise EmbedderUnavailable(
                f"Ollama at {self.url} sent an unreadable /api/embed response: {e}"
            ) from e
        if vectors.ndim != 2 or vectors.shape[0] != len(batch) or vectors.shape[1] == 0:
            raise EmbedderUnavailable(
                f"Ollama at {self.url} returned embeddings of shape {vectors.shape} "
                f"for {len(batch)} inputs"
            )
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbedderUnavailable(
                f"Ollama model {self.model} changed dimension: {vectors.shape[1]} != {self._dim}"
            )
        return vectors

    def _call(self, method: str, path: str, json: object | None = None) -> httpx.Response:
        """One request with retries on connection errors, timeouts and 5xx."""
        retrying = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=self.backoff_s, max=max(self.backoff_s * 8, 0.0)),
            retry=retry_if_exception_type(_Transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(self._send, method, path, json)
        except _Transient as e:
            raise EmbedderUnavailable(
                f"Ollama at {self.url} is unavailable ({method} {path}, "
                f"{self.attempts} attempts): {e.message}",
                detail={"url": self.url},
            ) from e

    def _send(self, method: str, path: str, json: object | None) -> httpx.Response:
        try:
            response = self._client.request(method, path, json=json)
        except httpx.TimeoutException as e:
            raise _Transient(f"timed out: {type(e).__name__}") from e
        except httpx.TransportError as e:
            raise _Transient(f"cannot connect: {e or type(e).__name__}") from e
        if response.status_code >= 500:
            raise _Transient(f"HTTP {response.status_code}: {error_text(response)}")
        return response

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "Ollama request failed (attempt %d/%d), retrying: %s",
            state.attempt_number,
            self.attempts,
            exc,
        )

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> OllamaEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
