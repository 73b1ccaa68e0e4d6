"""Chat through Ollama's native API: ``POST /api/chat`` streaming NDJSON, ``GET /api/tags``.

    {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":"The"},"done":false}
    …
    {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":""},
     "done":true,"done_reason":"stop","total_duration":…,"prompt_eval_count":26,"eval_count":290}

A failure is one line ``{"error": "…"}`` (HTTP 200 once the stream has begun).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx

from quire.errors import LLMModelNotPulled
from quire.llm.base import Message, ModelInfo, estimate_tokens
from quire.llm.streaming import HTTPChat, Line, as_int, read_object
from quire.ollama_api import bare_model, pull_hint, tag_models

log = logging.getLogger(__name__)

# Room kept for the reply when the caller sets no max_tokens.
DEFAULT_REPLY_TOKENS = 1024


def context_size(prompt_tokens: int, reply_tokens: int, ceiling: int) -> int:
    """``num_ctx`` for a call: prompt + reply rounded up to 1024, within [2048, ceiling]."""
    needed = -(-(prompt_tokens + reply_tokens) // 1024) * 1024
    return min(max(needed, 2048), ceiling)


def _dict(value: object) -> dict[str, object]:
    return dict(value) if isinstance(value, dict) else {}


class OllamaChat(HTTPChat):
    """An Ollama model, e.g. ``OllamaChat("http://127.0.0.1:11434", "llama3.2")``.

    ``num_ctx`` never shrinks below the largest one this client has sent: Ollama reloads the
    model whenever ``num_ctx`` changes, and one question makes several calls of varying size.
    """

    name = "ollama"
    chat_path = "/api/chat"
    models_path = "/api/tags"

    def __init__(
        self,
        url: str,
        model: str,
        *,
        connect_timeout_s: float = 5.0,
        first_token_timeout_s: float = 120.0,
        idle_timeout_s: float = 60.0,
        num_ctx_max: int = 8192,
        retries: int = 2,
        keep_alive: str | None = "30m",
        backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if num_ctx_max < 2048:
            raise ValueError("num_ctx_max must be >= 2048")
        super().__init__(
            url,
            model,
            connect_timeout_s=connect_timeout_s,
            first_token_timeout_s=first_token_timeout_s,
            idle_timeout_s=idle_timeout_s,
            retries=retries,
            backoff_s=backoff_s,
            transport=transport,
        )
        self.num_ctx_max = num_ctx_max
        self.keep_alive = keep_alive
        self._num_ctx_floor = 0

    @property
    def where(self) -> str:
        return f"Ollama at {self.url}"

    def num_ctx(self, messages: Sequence[Message], max_tokens: int | None) -> int:
        """The context size the next call gets (and remember it as the new floor)."""
        prompt = estimate_tokens(messages)
        reply = max_tokens or DEFAULT_REPLY_TOKENS
        if prompt + reply > self.num_ctx_max:
            log.warning(
                "%s: a prompt of ~%d tokens + %d for the reply exceeds num_ctx %d; "
                "Ollama will cut the start of the prompt",
                self.label,
                prompt,
                reply,
                self.num_ctx_max,
            )
        size = max(context_size(prompt, reply, self.num_ctx_max), self._num_ctx_floor)
        self._num_ctx_floor = size
        return size

    def _body(
        self,
        messages: Sequence[Message],
        *,
        json_mode: bool,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        options: dict[str, Any] = {"num_ctx": self.num_ctx(messages, max_tokens)}
        if temperature is not None:
            options["temperature"] = temperature
        if max_tokens is not None:
            options["num_predict"] = max_tokens
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "stream": True,
            "options": options,
        }
        if json_mode:
            body["format"] = "json"
        if self.keep_alive is not None:
            body["keep_alive"] = self.keep_alive
        return body

    def _parse(self, line: str) -> Line | None:
        part = read_object(line)
        if isinstance(part, Line):
            return part
        content = part.get("message")
        text = content.get("content") if isinstance(content, dict) else None
        if not part.get("done"):
            return Line(text=text or "") if isinstance(text, str) else None
        duration = as_int(part.get("total_duration"))
        return Line(
            text=text if isinstance(text, str) else "",
            done=True,
            finish_reason=str(part.get("done_reason") or "stop"),
            prompt_tokens=as_int(part.get("prompt_eval_count")),
            completion_tokens=as_int(part.get("eval_count")),
            total_ms=duration / 1e6 if duration is not None else None,
        )

    def _models(self, payload: Any) -> list[ModelInfo]:
        return [
            ModelInfo(str(m.get("name") or m.get("model")), _dict(m.get("details")))
            for m in tag_models(payload)
        ]

    def _ensure_model(self, models: list[ModelInfo]) -> None:
        names = {bare_model(m.name) for m in models}
        if bare_model(self.model) not in names:
            raise LLMModelNotPulled(
                f"{self.where} does not have the model {self.model!r}: {pull_hint(self.model)}",
                detail={"model": self.model, "url": self.url, "available": sorted(names)},
            )

    def _model_missing(self, message: str) -> LLMModelNotPulled:
        return LLMModelNotPulled(
            f"{self.where}: {message}: {pull_hint(self.model)}",
            detail={"model": self.model, "url": self.url},
        )
