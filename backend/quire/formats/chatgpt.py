"""A ChatGPT conversation (one element of ``conversations.json``) as pages, one per turn.

The visible branch is the path from ``current_node`` up to the root (without one, the deepest
leaf by last children); edits and regenerations on other branches are left out. A turn is a
user message and what the assistant showed after it, up to the next user message:

- ``text`` and ``multimodal_text`` (images become ``[image]``, voice turns their transcript);
- ``code`` the assistant ran in the Python tool, fenced, and its ``execution_output``;
- ``tether_quote`` (a page the browser quoted) as a quote, its page one of the turn's sources;
- reasoning (``thoughts`` summaries) in ``meta["reasoning"]``, not in the text: the UI hides it;
- hidden messages (system, custom instructions, ``is_visually_hidden_from_conversation``) and
  other tool traffic (searches, browser results) are out; unknown content types with a
  ``text`` or string ``parts`` pass through.

Citations become ``[N]`` markers numbered per turn (``【6†source】`` ranges in
``metadata.citations``, 2023–24; ``content_references`` private-use markers, 2025), the turn's
``meta["sources"]`` / ``meta["urls"]`` as for Perplexity (storage/web_sources.py).

See ``../shared/data/docs/CHAT-EXPORT-FORMATS.md`` §1 for the format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from quire.formats.perplexity_md import shorten, with_structure
from quire.storage.records import Page

CHAT_URL = "https://chatgpt.com/c/{id}"
#: Leftover 2025 citation markers: U+E200 … U+E201 (U+E202 separates the fields).
_PRIVATE_MARKER = re.compile("\ue200[^\ue201]*\ue201")
#: ``【6†source】``, ``【3†title†domain】``; in a quoted page also cut short at a line's end.
_TETHER_MARKER = re.compile(r"【[^】\n]{0,200}(?:】|$)", re.MULTILINE)
_MANY_BLANK = re.compile(r"\n{3,}")
_PY_TOOLS = ("python", "jupyter")


@dataclass
class Conversation:
    """One conversation ready to store: its key, title, pages and metadata."""

    key: str
    title: str
    pages: list[Page]
    meta: dict[str, Any]


@dataclass
class _Turn:
    question: list[str] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    asked_at: str | None = None
    answered_at: str | None = None
    attachments: list[str] = field(default_factory=list)

    def cite(self, url: str, title: str | None) -> int:
        """The turn's number for ``url`` (a new one when it is new)."""
        for s in self.sources:
            if s["url"] == url:
                if title and not s["title"]:
                    s["title"] = title
                return int(s["n"])
        self.sources.append({"n": len(self.sources) + 1, "url": url, "title": title or None})
        return len(self.sources)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def iso(value: Any) -> str | None:
    """An epoch (ChatGPT) as ISO-8601 UTC; None when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(float(value), UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return None


def visible_path(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages of the branch the user last saw, root first."""
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        return []
    node_id = conv.get("current_node")
    if not isinstance(node_id, str) or node_id not in mapping:
        node_id = _deepest_leaf(mapping)
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return [n["message"] for n in path if isinstance(n.get("message"), dict)]


def _deepest_leaf(mapping: dict[str, Any]) -> str | None:
    """Without ``current_node``: from the root, follow the last child (children rebuilt from
    ``parent``, which some exports keep without ``children``)."""
    children: dict[str | None, list[str]] = {}
    for nid, node in mapping.items():
        if isinstance(node, dict):
            parent = node.get("parent")
            children.setdefault(parent if isinstance(parent, str) else None, []).append(nid)
    roots = children.get(None) or []
    node_id = roots[0] if roots else None
    seen: set[str] = set()
    while node_id is not None and node_id not in seen and children.get(node_id):
        seen.add(node_id)
        node_id = children[node_id][-1]
    return node_id


def _hidden(msg: dict[str, Any]) -> bool:
    author = _obj(msg.get("author"))
    meta = _obj(msg.get("metadata"))
    content = _obj(msg.get("content"))
    return bool(
        meta.get("is_visually_hidden_from_conversation")
        or meta.get("is_user_system_message")
        or author.get("role") == "system"
        or content.get("content_type") == "user_editable_context"
    )


def _parts_text(parts: Any) -> str:
    out: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            kind = str(part.get("content_type", ""))
            if kind == "audio_transcription" and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif kind == "image_asset_pointer":
                out.append("[image]")
            elif isinstance(part.get("text"), str):
                out.append(part["text"])
    return "\n\n".join(p for p in out if p.strip())


def _cited_text(text: str, meta: dict[str, Any], turn: _Turn) -> str:
    """The answer with its citation markers replaced by ``[N]`` (sources noted in the turn)."""
    refs = meta.get("content_references")
    if isinstance(refs, list) and refs:
        for ref in refs:
            if not isinstance(ref, dict) or not isinstance(ref.get("matched_text"), str):
                continue
            matched = ref["matched_text"]
            numbers: list[int] = []
            for item in _ref_items(ref):
                numbers.append(turn.cite(item[0], item[1]))
            if ref.get("type") == "sources_footnote" or not matched.strip():
                replacement = ""
            elif numbers:
                replacement = "".join(f"[{n}]" for n in dict.fromkeys(numbers))
            elif ref.get("type") == "attribution" and isinstance(ref.get("alt"), str):
                replacement = ref["alt"]
            else:
                replacement = ""
            if matched.strip():
                text = text.replace(matched, replacement, 1)
    cites = meta.get("citations")
    if isinstance(cites, list) and cites:
        spans: list[tuple[int, int, int]] = []
        for c in cites:
            if not isinstance(c, dict):
                continue
            start, end = c.get("start_ix"), c.get("end_ix")
            info = _obj(c.get("metadata"))
            url = info.get("url")
            if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text):
                if isinstance(url, str) and url.startswith(("http://", "https://")):
                    title = info.get("title")
                    n = turn.cite(url, title if isinstance(title, str) else None)
                    spans.append((start, end, n))
        for start, end, n in sorted(spans, reverse=True):
            text = text[:start] + f"[{n}]" + text[end:]
    text = _PRIVATE_MARKER.sub("", text)
    return _TETHER_MARKER.sub("", text)


def _ref_items(ref: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(url, title) of the web pages a ``content_references`` entry names."""
    out: list[tuple[str, str | None]] = []
    for key in ("items", "sources"):
        for item in ref.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                url = item["url"]
                if url.startswith(("http://", "https://")):
                    title = item.get("title")
                    out.append((url, title if isinstance(title, str) else None))
    return out


def _model(msg: dict[str, Any]) -> str | None:
    meta = _obj(msg.get("metadata"))
    slug = meta.get("model_slug")
    return slug if isinstance(slug, str) and slug else None


def _add(turn: _Turn, msg: dict[str, Any]) -> None:
    """Add one visible non-user message to the turn it belongs to."""
    author = _obj(msg.get("author"))
    role = author.get("role")
    content = _obj(msg.get("content"))
    meta = _obj(msg.get("metadata"))
    kind = content.get("content_type")
    recipient = msg.get("recipient") or "all"
    if (model := _model(msg)) and model not in turn.models:
        turn.models.append(model)
    if kind == "thoughts":
        for t in content.get("thoughts") or []:
            if isinstance(t, dict):
                text = "\n".join(
                    str(t[k]) for k in ("summary", "content") if isinstance(t.get(k), str) and t[k]
                )
                if text:
                    turn.reasoning.append(text)
        return
    if kind == "reasoning_recap":
        return
    if kind == "code":
        if role == "assistant" and recipient in _PY_TOOLS and isinstance(content.get("text"), str):
            language = content.get("language")
            fence = language if isinstance(language, str) and language != "unknown" else "python"
            turn.answer.append(f"```{fence}\n{content['text'].rstrip()}\n```")
        return  # calls to the browser and web search are tool traffic
    if kind == "execution_output":
        if isinstance(content.get("text"), str) and content["text"].strip():
            turn.answer.append(f"```\n{content['text'].rstrip()}\n```")
        return
    if kind == "tether_quote":
        url, quote = content.get("url"), content.get("text")
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            title = content.get("title") if isinstance(content.get("title"), str) else None
            n = turn.cite(url, title)
            if isinstance(quote, str) and quote.strip():
                quote = _TETHER_MARKER.sub("", quote).strip()  # the page's own link markers
                lines = "\n".join(f"> {line}".rstrip() for line in quote.split("\n"))
                turn.answer.append(f"{lines}\n> — {title or url} [{n}]")
        return
    if role == "tool" or recipient != "all":
        return  # browser results, search results, tool calls
    if kind in ("text", "multimodal_text") or kind is None:
        text = _parts_text(content.get("parts"))
    elif isinstance(content.get("text"), str):
        text = content["text"]
    else:
        text = _parts_text(content.get("parts"))
    text = _cited_text(text, meta, turn).strip()
    if text:
        turn.answer.append(text)
        turn.answered_at = iso(msg.get("create_time")) or turn.answered_at


def tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n")]
    return _MANY_BLANK.sub("\n\n", "\n".join(lines)).strip()


def _turns(messages: list[dict[str, Any]]) -> list[_Turn]:
    turns: list[_Turn] = []
    for msg in messages:
        if _hidden(msg):
            continue
        author = _obj(msg.get("author"))
        content = _obj(msg.get("content"))
        if author.get("role") == "user":
            turn = _Turn(asked_at=iso(msg.get("create_time")))
            text = _parts_text(content.get("parts"))
            if not text and isinstance(content.get("text"), str):
                text = content["text"]
            turn.question.append(text)
            meta = _obj(msg.get("metadata"))
            for a in meta.get("attachments") or []:
                if isinstance(a, dict) and isinstance(a.get("name"), str):
                    turn.attachments.append(a["name"])
            turns.append(turn)
            continue
        if not turns:
            turns.append(_Turn())  # an assistant speaking first (a custom GPT's greeting)
        _add(turns[-1], msg)
    return [t for t in turns if "".join(t.question).strip() or t.answer]


def _page(number: int, turn: _Turn, title: str) -> Page:
    question = tidy("\n\n".join(turn.question))
    answer = tidy("\n\n".join(turn.answer))
    text = tidy(f"{question}\n\n{answer}") if question else answer
    meta: dict[str, Any] = {
        "query": question,
        "sources": turn.sources,
        "urls": [s["url"] for s in turn.sources],
        "model": turn.models[-1] if turn.models else None,
        "asked_at": turn.asked_at,
        "answered_at": turn.answered_at,
    }
    if turn.reasoning:
        meta["reasoning"] = turn.reasoning
    if turn.attachments:
        meta["attachments"] = turn.attachments
    page = Page(number, text, shorten(question or title), "markdown", meta)
    return with_structure(page)


def parse_conversation(conv: dict[str, Any]) -> Conversation:
    """One ChatGPT conversation as pages (one per visible turn) and document metadata."""
    cid = conv.get("conversation_id") or conv.get("id")
    if not isinstance(cid, str) or not cid.strip():
        raise ValueError("a conversation without an id")
    title = str(conv.get("title") or "").strip()
    turns = _turns(visible_path(conv))
    if not title or title == "New chat":
        first = next(("".join(t.question) for t in turns if "".join(t.question).strip()), "")
        title = shorten(first, 200) if first.strip() else title or "Untitled ChatGPT conversation"
    pages = [_page(n, t, title) for n, t in enumerate(turns, start=1)]
    models = list(dict.fromkeys(m for t in turns for m in t.models))
    default = conv.get("default_model_slug")
    meta: dict[str, Any] = {
        "source": "chatgpt",
        "conversation_id": cid,
        "title": title,
        "url": CHAT_URL.format(id=cid),
        "date": iso(conv.get("create_time")),
        "created_at": iso(conv.get("create_time")),
        "updated_at": iso(conv.get("update_time")),
        "model": default if isinstance(default, str) and default else next(reversed(models), None),
        "models": models,
        "turns": len(pages),
        "archived": bool(conv.get("is_archived")),
    }
    if isinstance(conv.get("gizmo_id"), str):
        meta["gizmo_id"] = conv["gizmo_id"]
    return Conversation(f"chatgpt:{cid}", title, pages, meta)
