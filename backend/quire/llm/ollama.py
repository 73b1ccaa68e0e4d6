"""Chat through Ollama's native API: ``POST /api/chat`` streaming NDJSON, ``GET /api/tags``,
``POST /api/show`` for the model's context length.

    {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":"The"},"done":false}
    …
    {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":""},
     "done":true,"done_reason":"stop","total_duration":…,"prompt_eval_count":26,"eval_count":290}

A failure is one line ``{"error": "…"}`` (HTTP 200 once the stream has begun).

Ollama cuts a prompt longer than ``num_ctx`` without an error (its default context is a few
thousand tokens), so every request sets ``num_ctx`` to the prompt's estimated size plus room
for the reply, at most ``num_ctx_max`` and the model's advertised ``<arch>.context_length``; a
prompt that cannot fit is refused here, before any request, and ``truncate: false`` and
``shift: false`` make a server that counts more tokens than estimated fail loudly rather than
drop the start of the prompt (Ollama 0.12.6+; older servers ignore them).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx

from quire.errors import LLMModelNotPulled, LLMUnavailable
from quire.llm.base import REPLY_TOKENS, Message, ModelInfo, estimate_tokens
from quire.llm.streaming import CHECK_TIMEOUT_S, HTTPChat, Line, as_int, read_object
from quire.ollama_api import bare_model, error_text, pull_hint, tag_models

log = logging.getLogger(__name__)

#: The least room a reply gets: a prompt that leaves less does not fit.
MIN_REPLY_TOKENS = 256


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
    show_path = "/api/show"

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
        self.advertised: int | None = None  # the model's context_length, once /api/show said
        self._num_ctx_floor = 0

    @property
    def where(self) -> str:
        return f"Ollama at {self.url}"

    @property
    def ceiling(self) -> int:
        """The largest ``num_ctx`` sent: the setting, capped by the model's own limit."""
        return min(self.num_ctx_max, self.advertised or self.num_ctx_max)

    async def context_window(self) -> int:
        if self.advertised is None:
            self.advertised = await self._context_length()
        return self.ceiling

    async def _prepare(self) -> None:
        await self.context_window()

    async def _context_length(self) -> int | None:
        """``<arch>.context_length`` of ``POST /api/show``; None when it cannot be read (asked
        again next time)."""
        timeout = httpx.Timeout(CHECK_TIMEOUT_S, connect=self.connect_timeout_s)
        try:
            response = await self._client.post(
                self.show_path, json={"model": self.model}, timeout=timeout
            )
            info = response.json().get("model_info") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError) as e:
            log.warning("%s: POST %s failed: %s", self.label, self.show_path, e)
            return None
        if not isinstance(info, dict):
            log.warning(
                "%s: POST %s gave no model_info (%s): num_ctx stays within %d",
                self.label,
                self.show_path,
                error_text(response) if response.status_code != 200 else "old server?",
                self.num_ctx_max,
            )
            return None
        arch = info.get("general.architecture")
        length = info.get(f"{arch}.context_length")
        if length is None:  # an architecture key that does not match its name
            length = next((v for k, v in info.items() if k.endswith(".context_length")), None)
        return as_int(length)

    def options(self, messages: Sequence[Message], max_tokens: int | None) -> dict[str, int]:
        """``num_ctx`` for the next call (remembered as the new floor), and ``num_predict`` when
        the reply must be held to what is left; LLMUnavailable when the prompt cannot fit."""
        prompt = estimate_tokens(messages)
        reply = max_tokens or REPLY_TOKENS
        ceiling = self.ceiling
        if prompt + min(reply, MIN_REPLY_TOKENS) > ceiling:
            err = LLMUnavailable(
                f"{self.label}: a prompt of ~{prompt:,} tokens does not fit the model's "
                f"{ceiling:,}-token context (QUIRE_LLM_NUM_CTX_MAX {self.num_ctx_max:,}, "
                f"the model's own limit {self.advertised or 'unknown'})",
                detail={"prompt_tokens": prompt, "num_ctx": ceiling},
            )
            err.retryable = False  # a request that is too big for this server, not a fault
            raise err
        size = min(max(context_size(prompt, reply, ceiling), self._num_ctx_floor), ceiling)
        self._num_ctx_floor = size
        out = {"num_ctx": size}
        if prompt + reply > size:  # the reply gets what is left, so nothing shifts out
            out["num_predict"] = size - prompt
        elif max_tokens is not None:
            out["num_predict"] = max_tokens
        return out

    def _body(
        self,
        messages: Sequence[Message],
        *,
        json_mode: bool,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        options: dict[str, Any] = dict(self.options(messages, max_tokens))
        if temperature is not None:
            options["temperature"] = temperature
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "stream": True,
            "options": options,
            "truncate": False,
            "shift": False,
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
