"""Ollama's wire format, shared by the embedder (embed/ollama.py) and the chat client (llm/).

Ollama answers errors as ``{"error": "..."}``; OpenAI-compatible servers (and Ollama's own
``/v1`` routes) as ``{"error": {"message": "...", "type": ...}}``. Both are read here.
"""

from __future__ import annotations

from typing import Any

import httpx


def bare_model(model: str) -> str:
    """``llama3.2:latest`` and ``llama3.2`` name the same model."""
    return model.removesuffix(":latest")


def pull_hint(model: str) -> str:
    return f"run `ollama pull {model}`"


def error_message(payload: Any) -> str | None:
    """The message of an ``{"error": "..."}`` or ``{"error": {"message": "..."}}`` object."""
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if isinstance(error, str):
        return error
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return None


def json_error(response: httpx.Response) -> str | None:
    """The server's error message, if the body is one of the two error shapes."""
    try:
        return error_message(response.json())
    except ValueError:
        return None


def error_text(response: httpx.Response) -> str:
    """The server's error message, else the start of the body, else the reason phrase."""
    return json_error(response) or response.text[:300].strip() or response.reason_phrase


def tag_models(payload: Any) -> list[dict[str, Any]]:
    """The model objects of a ``GET /api/tags`` body; ValueError if it is not one."""
    models = (payload.get("models") or []) if isinstance(payload, dict) else None
    if not isinstance(models, list) or not all(isinstance(m, dict) for m in models):
        raise ValueError("not an /api/tags response")
    return models


def tag_names(payload: Any) -> set[str]:
    """The bare model names in a ``GET /api/tags`` body; ValueError if it is not one."""
    return {
        bare_model(str(m[k])) for m in tag_models(payload) for k in ("name", "model") if m.get(k)
    }
