"""Chat through any OpenAI-compatible server (llama.cpp's llama-server, vLLM, LM Studio, Ollama's
``/v1``): ``POST /v1/chat/completions`` streaming Server-Sent Events, ``GET /v1/models``.

    data: {"choices":[{"index":0,"delta":{"content":"The"},"finish_reason":null}]}
    …
    data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
    data: {"choices":[],"usage":{"prompt_tokens":26,"completion_tokens":290,"total_tokens":316}}
    data: [DONE]

Such servers take a context size at start (llama-server ``-c``, vLLM ``--max-model-len``) that
a request cannot change: ``context_tokens`` says what it is, capped by what ``/v1/models``
advertises for the model (vLLM's ``max_model_len``, LM Studio's ``context_length``), so that the
engine sizes its prompts to it.

Errors mid-stream come as ``data: {"error": {"message": …}}`` (OpenAI, vLLM) or as an
``error: {…}`` field (llama-server). Each server sends one JSON object per ``data:`` line, so
lines are read one by one rather than as multi-line events.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import httpx

from quire.errors import LLMModelNotPulled, LLMUnavailable
from quire.llm.base import Message, ModelInfo
from quire.llm.streaming import HTTPChat, Line, as_int, read_object
from quire.ollama_api import bare_model, error_message, pull_hint

log = logging.getLogger(__name__)

#: Where a /v1/models entry says how many tokens the served model takes: vLLM, LM Studio and
#: OpenRouter.
_CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length")


class OpenAIChat(HTTPChat):
    """A model behind ``/v1/chat/completions``; ``model=""`` takes the first one the server lists.

    ``url`` may end in ``/v1`` or not: ``http://127.0.0.1:8080`` and ``…:8080/v1`` are the same.
    """

    name = "openai"
    chat_path = "/v1/chat/completions"
    models_path = "/v1/models"

    def __init__(
        self,
        url: str,
        model: str = "",
        *,
        api_key: str | None = None,
        context_tokens: int = 4096,
        connect_timeout_s: float = 5.0,
        first_token_timeout_s: float = 120.0,
        idle_timeout_s: float = 60.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(
            url.rstrip("/").removesuffix("/v1"),
            model,
            connect_timeout_s=connect_timeout_s,
            first_token_timeout_s=first_token_timeout_s,
            idle_timeout_s=idle_timeout_s,
            retries=retries,
            backoff_s=backoff_s,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else None,
            transport=transport,
        )
        self.context_tokens = context_tokens
        self.advertised: int | None = None  # set by check(), from the model's /v1/models entry
        self._listed = False

    @property
    def where(self) -> str:
        return f"the OpenAI-compatible server at {self.url}"

    async def context_window(self) -> int:
        if not self._listed:
            try:
                await self.check()
            except LLMUnavailable as e:
                log.warning("%s: the model's context is unknown: %s", self.label, e.message)
        return min(self.context_tokens, self.advertised or self.context_tokens)

    async def _prepare(self) -> None:
        if not self.model:
            await self.check()

    def _body(
        self,
        messages: Sequence[Message],
        *,
        json_mode: bool,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _parse(self, line: str) -> Line | None:
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "error":  # llama-server: `error: {"code":500,"message":"…","type":"…"}`
            try:
                message = error_message({"error": json.loads(value)})
            except ValueError:
                message = None
            return Line(error=message or value.strip() or "error")
        if field != "data":
            return None  # comments (": ping"), event:, id:, retry:
        if value.strip() == "[DONE]":
            return Line(done=True)
        chunk = read_object(value)
        if isinstance(chunk, Line):
            return chunk
        parsed = Line()
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            delta = choices[0].get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            parsed.text = content if isinstance(content, str) else ""
            finish = choices[0].get("finish_reason")
            parsed.finish_reason = str(finish) if finish else None
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            parsed.prompt_tokens = as_int(usage.get("prompt_tokens"))
            parsed.completion_tokens = as_int(usage.get("completion_tokens"))
        timings = chunk.get("timings")  # llama-server's own statistics
        if isinstance(timings, dict):
            prompt_ms, predicted_ms = timings.get("prompt_ms"), timings.get("predicted_ms")
            if isinstance(prompt_ms, int | float) and isinstance(predicted_ms, int | float):
                parsed.total_ms = float(prompt_ms + predicted_ms)
        return parsed

    def _models(self, payload: Any) -> list[ModelInfo]:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
            raise ValueError("not a /v1/models response")
        return [
            ModelInfo(str(m.get("id")), {k: v for k, v in m.items() if k != "id"}) for m in data
        ]

    def _ensure_model(self, models: list[ModelInfo]) -> None:
        names = [m.name for m in models]
        if not self.model:
            if not names:
                raise LLMModelNotPulled(
                    f"{self.where} serves no model", detail={"url": self.url, "available": []}
                )
            self.model = names[0]
            log.info("%s: no model configured, using %r", self.where, self.model)
        ours = next((m for m in models if bare_model(m.name) == bare_model(self.model)), None)
        if ours is None:
            raise LLMModelNotPulled(
                f"{self.where} does not serve the model {self.model!r} (it serves: "
                f"{', '.join(names) or 'nothing'}): set QUIRE_OPENAI_MODEL to one of them",
                detail={"model": self.model, "url": self.url, "available": names},
            )
        self._listed = True
        self.advertised = next(
            (n for k in _CONTEXT_KEYS if (n := as_int(ours.details.get(k))) is not None), None
        )

    def _model_missing(self, message: str) -> LLMModelNotPulled:
        # Ollama's /v1 says "model "x" not found, try pulling it first".
        hint = pull_hint(self.model) if "pull" in message else "check QUIRE_OPENAI_MODEL"
        return LLMModelNotPulled(
            f"{self.where}: {message}: {hint}", detail={"model": self.model, "url": self.url}
        )
