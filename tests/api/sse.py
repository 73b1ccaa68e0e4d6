"""Reading a Server-Sent Events response in tests (TestClient or httpx streams)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from quire.synthesis.events import ChatEvent


def parse_sse(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(event, data) pairs; ``data`` JSON-decoded when it is JSON. Comments are skipped."""
    event, data = "message", []
    for line in lines:
        if line == "":
            if data:
                raw = "\n".join(data)
                try:
                    yield event, json.loads(raw)
                except ValueError:
                    yield event, raw
            event, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield event, "\n".join(data)


def chat_events(lines: Iterable[str]) -> list[tuple[str, Any]]:
    """A chat stream's (event, data) pairs, each checked against the answer contract: its data
    is a valid model of that event (synthesis/events.py), named as the SSE event is."""
    events = list(parse_sse(lines))
    for name, data in events:
        assert ChatEvent.model_validate(data).root.event == name, (name, data)
    return events


def answer_text(events: list[tuple[str, Any]]) -> str:
    """The answer as streamed: the concatenated ``token`` events."""
    return "".join(d["text"] for e, d in events if e == "token")


def first(events: list[tuple[str, Any]], name: str) -> Any:
    return next(d for e, d in events if e == name)
