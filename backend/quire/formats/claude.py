"""A claude.ai conversation (one element of ``conversations.json``) as pages, one per turn, and
the documents of a project in ``projects.json``.

Messages: built from ``content`` blocks when there are any (``text`` blocks are the answer;
``thinking`` goes to ``meta["reasoning"]``; tool and other blocks are skipped), else from
``text`` (2024 exports; ``text`` is thinking and answer glued together when ``content``
exists). Attachments' ``extracted_content`` follows the question, files become ``[image: name]``
placeholders, inline ``<antArtifact>`` tags a titled code fence. Order: the
``parent_message_uuid`` chain from ``current_leaf_message_uuid`` when the export has one, else
``created_at`` (stable; on equal times the human first), as the export is not chronological.
Web citations on text blocks become the turn's ``meta["sources"]``.

See ``../shared/data/docs/CHAT-EXPORT-FORMATS.md`` §2 for the format.
"""

from __future__ import annotations

import re
from typing import Any

from quire.formats.chatgpt import Conversation, tidy
from quire.formats.perplexity_md import shorten, with_structure
from quire.storage.records import Page

CHAT_URL = "https://claude.ai/chat/{id}"
_ARTIFACT_OPEN = re.compile(r"<antArtifact\b([^>]*)>")
_ARTIFACT_CLOSE = re.compile(r"</antArtifact>")
_ATTR = re.compile(r'(\w+)="([^"]*)"')


def _artifacts(text: str) -> str:
    def opening(m: re.Match[str]) -> str:
        attrs = dict(_ATTR.findall(m.group(1)))
        return f"**Artifact: {attrs.get('title') or attrs.get('identifier') or 'untitled'}**\n```\n"

    return _ARTIFACT_CLOSE.sub("\n```", _ARTIFACT_OPEN.sub(opening, text))


def _message(msg: dict[str, Any]) -> tuple[str, list[str], list[tuple[str, str | None]]]:
    """(text, reasoning, cited (url, title)) of one message."""
    blocks = msg.get("content")
    reasoning: list[str] = []
    cited: list[tuple[str, str | None]] = []
    if isinstance(blocks, list) and blocks:
        texts: list[str] = []
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                texts.append(b["text"])
                for c in b.get("citations") or []:
                    url = c.get("url") if isinstance(c, dict) else None
                    if isinstance(url, str) and url.startswith(("http://", "https://")):
                        title = c.get("title")
                        cited.append((url, title if isinstance(title, str) else None))
            elif b.get("type") == "thinking" and isinstance(b.get("thinking"), str):
                reasoning.append(b["thinking"])
        text = "\n\n".join(texts)
    else:
        raw = msg.get("text")
        text = raw if isinstance(raw, str) else ""
    parts = [_artifacts(text.strip())]
    for f in msg.get("files") or []:
        if isinstance(f, dict) and isinstance(f.get("file_name"), str):
            parts.append(f"[image: {f['file_name']}]")
    for a in msg.get("attachments") or []:
        if isinstance(a, dict) and isinstance(a.get("extracted_content"), str):
            name = a.get("file_name") or "attachment"
            parts.append(f"Attachment: {name}\n\n{a['extracted_content'].strip()}")
    return "\n\n".join(p for p in parts if p), reasoning, cited


def _ordered(conv: dict[str, Any]) -> list[dict[str, Any]]:
    messages = [m for m in conv.get("chat_messages") or [] if isinstance(m, dict)]
    leaf = conv.get("current_leaf_message_uuid")
    by_id = {m.get("uuid"): m for m in messages}
    linked = all("parent_message_uuid" in m for m in messages)
    if isinstance(leaf, str) and leaf in by_id and linked:
        path: list[dict[str, Any]] = []
        seen: set[str] = set()
        node: Any = leaf
        while isinstance(node, str) and node in by_id and node not in seen:
            seen.add(node)
            path.append(by_id[node])
            node = by_id[node].get("parent_message_uuid")
        return path[::-1]
    return sorted(
        messages,
        key=lambda m: (str(m.get("created_at") or ""), 0 if m.get("sender") == "human" else 1),
    )


def parse_conversation(conv: dict[str, Any]) -> Conversation:
    """One Claude conversation as pages (one per human → assistant turn) and metadata."""
    cid = conv.get("uuid")
    if not isinstance(cid, str) or not cid.strip():
        raise ValueError("a conversation without a uuid")
    turns: list[dict[str, Any]] = []
    for msg in _ordered(conv):
        text, reasoning, cited = _message(msg)
        if msg.get("sender") == "human" or not turns:
            turns.append({"q": [], "a": [], "r": [], "src": [], "asked": None, "answered": None})
            if msg.get("sender") == "human":
                turns[-1]["q"].append(text)
                turns[-1]["asked"] = msg.get("created_at")
                continue
        turn = turns[-1]
        if text:
            turn["a"].append(text)
        turn["r"] += reasoning
        turn["src"] += cited
        turn["answered"] = msg.get("created_at") or turn["answered"]
    turns = [t for t in turns if "".join(t["q"]).strip() or t["a"]]
    title = str(conv.get("name") or "").strip()
    if not title:
        first = next(("".join(t["q"]) for t in turns if "".join(t["q"]).strip()), "")
        title = shorten(first, 200) if first else "Untitled Claude conversation"
    pages: list[Page] = []
    for n, t in enumerate(turns, start=1):
        question = tidy("\n\n".join(t["q"]))
        answer = tidy("\n\n".join(t["a"]))
        sources: list[dict[str, Any]] = []
        for url, stitle in t["src"]:
            if all(s["url"] != url for s in sources):
                sources.append({"n": len(sources) + 1, "url": url, "title": stitle})
        meta: dict[str, Any] = {
            "query": question,
            "sources": sources,
            "urls": [s["url"] for s in sources],
            "asked_at": t["asked"],
            "answered_at": t["answered"],
        }
        if t["r"]:
            meta["reasoning"] = t["r"]
        text = tidy(f"{question}\n\n{answer}") if question else answer
        pages.append(with_structure(Page(n, text, shorten(question or title), "markdown", meta)))
    meta = {
        "source": "claude",
        "conversation_id": cid,
        "title": title,
        "url": CHAT_URL.format(id=cid),
        "date": conv.get("created_at"),
        "created_at": conv.get("created_at"),
        "updated_at": conv.get("updated_at"),
        "model": conv.get("model") if isinstance(conv.get("model"), str) else None,
        "turns": len(pages),
    }
    if isinstance(conv.get("summary"), str) and conv["summary"].strip():
        meta["summary"] = conv["summary"].strip()
    if isinstance(conv.get("project_uuid"), str):
        meta["project_uuid"] = conv["project_uuid"]
    return Conversation(f"claude:{cid}", title, pages, meta)


def project_documents(project: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(key, title, markdown, metadata) of each document of a Claude project; the metadata
    names the project."""
    puid = project.get("uuid")
    if not isinstance(puid, str):
        return []
    name = project.get("name")
    link = {"uuid": puid, "name": name if isinstance(name, str) else None}
    out = []
    for doc in project.get("docs") or []:
        if not isinstance(doc, dict) or not isinstance(doc.get("content"), str):
            continue
        duid = doc.get("uuid")
        if not isinstance(duid, str) or not doc["content"].strip():
            continue
        title = str(doc.get("filename") or duid)
        meta = {
            "source": "claude",
            "project": link,
            "doc_uuid": duid,
            "filename": doc.get("filename"),
            "created_at": doc.get("created_at"),
        }
        out.append((f"claude:project:{puid}:doc:{duid}", title, doc["content"], meta))
    return out
