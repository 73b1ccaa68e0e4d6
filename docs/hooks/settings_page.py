"""The configuration page, generated from ``quire.config.Settings``: every field with its
environment variable, type, default and description, grouped as config.py groups them."""

from __future__ import annotations

import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

#: The first field of each group, in config.py's order, with what the group is about. A field
#: belongs to the group of the nearest start above it, so a new field needs no change here.
GROUPS: dict[str, tuple[str, str]] = {
    "data_dir": (
        "Library and server",
        "Where the library lives and how the API listens "
        "([Team library](../POSTGRES.md), [Security model](../design/security.md)).",
    ),
    "chunk_chars": (
        "Ingest",
        "Chunking, OCR and the worker's limits ([Sources](../sources/index.md)).",
    ),
    "embedder": (
        "Embedding",
        "Which model embeds passages and questions ([Models](../models.md), "
        "[Languages](languages.md)).",
    ),
    "llm_backends": (
        "Language model",
        "The LLM that writes answers ([Connect Ollama](../getting-started/ollama.md)); without "
        "one, answers are extractive.",
    ),
    "pool_precise": (
        "Retrieval",
        "The search pipeline's sizes, weights and caches ([Retrieval](../design/retrieval.md)).",
    ),
    "rerank_model_dir": (
        "Reranking",
        "The cross-encoder ([Models](../models.md), [Retrieval](../design/retrieval.md#rerank)).",
    ),
    "perplexity_url": ("Perplexity sync", "[Perplexity](../sources/perplexity.md)."),
    "mcp_ingest": ("MCP server", "The `ingest` tool's permissions ([MCP](../mcp.md#ingest))."),
    "watch_dirs": ("Watched folders", "[Watched folders](../sources/watched-folders.md)."),
}

INTRO = """\
# Configuration

Quire reads its settings from environment variables, each `QUIRE_` and the setting's name in
capitals, validated when a process starts (a bad value stops it with the reason). This page is
generated from `quire.config.Settings` when the site is built, so it lists every setting there
is. Set them in the shell before `make run` or a `quire` command, or under `x-quire-env` in
docker-compose.yml.

`make run` also reads `QUIRE_WEB_LISTEN`, nginx's address (default `127.0.0.1:8080`; another
address only with `QUIRE_API_TOKEN` set, which nginx passes on to the API).
"""


def cell(text: str) -> str:
    """Text safe inside a markdown table cell: ``|`` escaped outside code spans (Python-Markdown
    keeps a code span's ``|`` and would show the backslash), ``<`` as an entity."""
    parts = text.replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = parts[i].replace("|", "\\|").replace("<", "&lt;")
    return "`".join(parts).strip()


def type_name(annotation: Any) -> str:
    """``int``, ``path``, ``secret``, the choices of a Literal; ``or unset`` for Optional."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(type_name(a) for a in args) + ", or unset"
    if origin is Literal:
        return " \\| ".join(f"`{v}`" for v in typing.get_args(annotation))
    if isinstance(annotation, type):
        if issubclass(annotation, SecretStr):
            return "secret"
        if issubclass(annotation, Path):
            return "path"
        return annotation.__name__
    return str(annotation)


def bounds(field: FieldInfo) -> str:
    """The field's numeric limits, e.g. ``≥ 1``, ``1–65535``."""
    low = high = ""
    for meta in field.metadata:
        if isinstance(meta, Ge):
            low = f"{meta.ge}"
        elif isinstance(meta, Gt):
            low = f"> {meta.gt}"
        elif isinstance(meta, Le):
            high = f"{meta.le}"
        elif isinstance(meta, Lt):
            high = f"< {meta.lt}"
    if low and high and not low.startswith(">") and not high.startswith("<"):
        return f"{low}–{high}"
    parts = [f"≥ {low}" if low and not low.startswith(">") else low]
    parts.append(f"≤ {high}" if high and not high.startswith("<") else high)
    return ", ".join(p for p in parts if p)


def default_text(field: FieldInfo) -> str:
    """The default as it would be written in the environment."""
    value = field.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, Enum):
        value = value.value
    if value == "":
        return "empty"
    if isinstance(value, Path) and not value.is_absolute():
        return f"`./{value}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def rows(settings: type[BaseModel]) -> list[tuple[str, str, str, str, str]]:
    """(group, variable, type, default, description) per field, in declaration order.

    Raises ValueError naming the fields without a description: the page would not explain them.
    """
    fields = settings.model_fields
    missing_starts = sorted(set(GROUPS) - set(fields))
    if missing_starts:
        raise ValueError(f"GROUPS in {__file__} starts groups at unknown fields: {missing_starts}")
    undocumented = [f"QUIRE_{n.upper()}" for n, f in fields.items() if not f.description]
    if undocumented:
        raise ValueError(f"settings without a description in quire.config: {undocumented}")
    out = []
    group = GROUPS[next(iter(fields))][0] if next(iter(fields)) in GROUPS else "General"
    for name, field in fields.items():
        group = GROUPS[name][0] if name in GROUPS else group
        kind = type_name(field.annotation)
        limits = bounds(field)
        out.append(
            (
                group,
                f"QUIRE_{name.upper()}",
                f"{kind} ({limits})" if limits else kind,
                default_text(field),
                cell(field.description or ""),
            )
        )
    return out


def render(settings: type[BaseModel] | None = None) -> str:
    """The page: an introduction, then one table per group."""
    if settings is None:
        from quire.config import Settings

        settings = Settings
    intros = dict(GROUPS.values())
    lines = [INTRO]
    current = None
    for group, variable, kind, default, description in rows(settings):
        if group != current:
            current = group
            lines += ["", f"## {group}", "", intros.get(group, ""), ""]
            lines += ["| variable | type | default | what it does |", "| --- | --- | --- | --- |"]
        lines.append(f"| `{variable}` | {kind} | {default} | {description} |")
    return "\n".join(lines) + "\n"
