"""Limits the web app enforces before sending are the server's own."""

from __future__ import annotations

import re

from quire.api.limits import MAX_PAGE_SIZE
from quire.retrieval.search import MAX_QUERY_CHARS
from tests.conftest import REPO


def test_the_composer_refuses_what_search_would_cut() -> None:
    chat_ts = (REPO / "frontend" / "src" / "api" / "chat.ts").read_text()
    found = re.search(r"export const QUESTION_MAX_CHARS = (\d+)", chat_ts)
    assert found, "frontend/src/api/chat.ts lost QUESTION_MAX_CHARS"
    assert int(found.group(1)) == MAX_QUERY_CHARS


def test_the_notes_pages_are_the_apis_page_size() -> None:
    notes_ts = (REPO / "frontend" / "src" / "api" / "notes.ts").read_text()
    found = re.search(r"export const MAX_PAGE_SIZE = (\d+)", notes_ts)
    assert found, "frontend/src/api/notes.ts lost MAX_PAGE_SIZE"
    assert int(found.group(1)) == MAX_PAGE_SIZE
