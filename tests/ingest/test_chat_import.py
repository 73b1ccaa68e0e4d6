"""ChatGPT and Claude exports on the real samples: turns of the visible branch, sources,
models and timestamps; re-imports that write nothing or one conversation; bad exports."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from quire.config import Settings
from quire.errors import CorruptFile, EmptyFile, ResourceLimit, UnsupportedFileType
from quire.formats.chat_export import read_export
from quire.formats.chatgpt import parse_conversation as parse_chatgpt
from quire.formats.claude import parse_conversation as parse_claude
from quire.formats.detect import detect_kind
from quire.formats.extract import extract_file
from quire.sources.chat_import import canonical, import_export
from quire.storage import source_runs
from quire.storage.db import Database
from quire.storage.web_sources import web_sources
from tests.conftest import DOCS
from tests.fakes.embedder import CountingEmbedder

CHATGPT = DOCS / "chatgpt"
CLAUDE = DOCS / "claude"


def _load(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def _all_chatgpt() -> list[dict[str, Any]]:
    return [c for f in sorted(CHATGPT.glob("*.json")) for c in _load(f)]


def _path_ids(conv: dict[str, Any]) -> list[str]:
    """The reference walk of CHAT-EXPORT-FORMATS.md §1.4, written apart from the importer."""
    mapping, ids, node = conv["mapping"], [], conv["current_node"]
    while node is not None and node in mapping:
        ids.append(node)
        node = mapping[node].get("parent")
    return ids[::-1]


def _shown_user_messages(conv: dict[str, Any]) -> int:
    n = 0
    for nid in _path_ids(conv):
        m = conv["mapping"][nid]["message"]
        if not m or m["author"]["role"] != "user":
            continue
        meta, content = m.get("metadata") or {}, m["content"]
        if meta.get("is_visually_hidden_from_conversation"):
            continue
        if content["content_type"] == "user_editable_context":
            continue
        n += 1
    return n


def _text_of(m: dict[str, Any]) -> str:
    parts = m["content"].get("parts") or []
    return "".join(p for p in parts if isinstance(p, str))


# -- ChatGPT: the samples ---------------------------------------------------------------------
EXPECTED = {  # file -> [(turns, web sources)] per conversation, counted by hand from the files
    "2023-09_code-interpreter_chatgpt2graph.json": [(8, 0)],
    "2024-01_web-browsing_librechat.json": [(3, 4), (2, 0)],
    "2024-05_branches_librechat.json": [(3, 0)],
    "2025-06_branches-image-upload_chatgpt-archive.json": [(14, 2)],
    "2025-11_web-search-thoughts_chatgpt-archive.json": [(2, 8)],
    "2026-01_voice-mode_chatgpt-archive.json": [(1, 0)],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_chatgpt_turns_and_sources_per_sample(name: str) -> None:
    convs = _load(CHATGPT / name)
    got = []
    for raw in convs:
        conv = parse_chatgpt(raw)
        # One page per user message the UI shows on the visible branch.
        assert len(conv.pages) == _shown_user_messages(raw)
        got.append((len(conv.pages), sum(len(p.meta["sources"]) for p in conv.pages)))
        for p in conv.pages:
            assert p.heading_path and len(p.heading_path) <= 120
            assert p.text.startswith(p.meta["query"][:50])
            assert "\ue200" not in p.text and "【" not in p.text  # no raw citation markers
        assert conv.key == f"chatgpt:{raw['id']}"
        assert conv.meta["created_at"] and conv.meta["updated_at"]
        assert conv.meta["url"] == f"https://chatgpt.com/c/{raw['id']}"
    assert got == EXPECTED[name]


def test_the_branch_point_counts_of_the_format_notes() -> None:
    """§1.4: 7 of 12 messages visible in 2024-05, 36 of 46 in 2025-06."""
    small = _load(CHATGPT / "2024-05_branches_librechat.json")[0]
    big = _load(CHATGPT / "2025-06_branches-image-upload_chatgpt-archive.json")[0]
    for conv, shown, total in ((small, 7, 12), (big, 36, 46)):
        ids = _path_ids(conv)
        assert sum(1 for i in ids if conv["mapping"][i]["message"]) == shown
        assert sum(1 for n in conv["mapping"].values() if n["message"]) == total


@pytest.mark.parametrize(
    "name",
    ["2024-05_branches_librechat.json", "2025-06_branches-image-upload_chatgpt-archive.json"],
)
def test_only_the_visible_branch_is_kept(name: str) -> None:
    raw = _load(CHATGPT / name)[0]
    text = "\n".join(p.text for p in parse_chatgpt(raw).pages)
    on_path = set(_path_ids(raw))
    shown = [
        _text_of(raw["mapping"][i]["message"]) for i in on_path if raw["mapping"][i]["message"]
    ]
    off = [
        _text_of(n["message"])
        for nid, n in raw["mapping"].items()
        if nid not in on_path and n["message"] and n["message"]["author"]["role"] != "system"
    ]
    only_off = [t.strip()[:40] for t in off if t.strip() and not any(t[:40] in s for s in shown)]
    assert only_off, "the sample has a branch whose text is nowhere on the visible path"
    for snippet in only_off:
        assert snippet not in text
    if name.startswith("2024-05"):
        assert "so cool bro" not in text and "hi again" in text  # the edited user turn
        assert "so cool bro" in json.dumps(raw)


def test_chatgpt_content_types() -> None:
    code = parse_chatgpt(_load(CHATGPT / "2023-09_code-interpreter_chatgpt2graph.json")[0])
    assert code.meta["model"] == "gpt-4-code-interpreter"
    all_text = "\n".join(p.text for p in code.pages)
    assert "```python" in all_text and "import numpy" in all_text  # the code it ran
    assert all_text.count("```") >= 4  # and its output

    image = parse_chatgpt(_load(CHATGPT / "2025-06_branches-image-upload_chatgpt-archive.json")[0])
    assert any(p.text.startswith("[image]") for p in image.pages)
    assert any(p.meta.get("attachments") for p in image.pages)

    think = parse_chatgpt(_load(CHATGPT / "2025-11_web-search-thoughts_chatgpt-archive.json")[0])
    first = think.pages[0]
    assert first.meta["reasoning"] and first.meta["reasoning"][0] not in first.text
    assert first.meta["model"].startswith("gpt-5-1") and think.meta["archived"] is True
    assert first.meta["asked_at"] == "2025-11-16T23:43:30+00:00"  # epoch → UTC
    raw = _load(CHATGPT / "2025-11_web-search-thoughts_chatgpt-archive.json")[0]
    profile = next(
        n["message"]["content"]["user_profile"]
        for n in raw["mapping"].values()
        if n["message"] and n["message"]["content"]["content_type"] == "user_editable_context"
    )
    assert profile.strip()[:30] not in first.text  # custom instructions are hidden
    urls = {s["url"] for s in first.meta["sources"]}
    assert "https://www.jetbrains.com/pycharm/?utm_source=chatgpt.com" in urls

    voice = parse_chatgpt(_load(CHATGPT / "2026-01_voice-mode_chatgpt-archive.json")[0])
    assert voice.pages[0].text.startswith("기타 위에 올릴 수 있는 방법이 없니?")
    assert voice.meta["model"] == "auto"


def test_chatgpt_citations_resolve_per_passage() -> None:
    conv = parse_chatgpt(_load(CHATGPT / "2024-01_web-browsing_librechat.json")[0])
    turn = conv.pages[0]
    assert turn.meta["urls"] == [s["url"] for s in turn.meta["sources"]]
    tail = turn.text[turn.text.rindex("The fuel consumption") :]
    found = web_sources(turn.meta, turn.text, tail)
    assert [s.n for s in found] == [1, 2]
    assert found[0].url.startswith("https://www.ultimatespecs.com/")
    assert found[1].title == "Volkswagen Transporter Review - Drive"


# -- Claude -----------------------------------------------------------------------------------
def test_claude_samples() -> None:
    art = parse_claude(_load(CLAUDE / "2024-10_artifacts_claude-to-sqlite.json")[0])
    raw = _load(CLAUDE / "2024-10_artifacts_claude-to-sqlite.json")[0]
    humans = sorted(m["created_at"] for m in raw["chat_messages"] if m["sender"] == "human")
    assert len(art.pages) == len(humans) == 10
    first_human = min(
        (m for m in raw["chat_messages"] if m["sender"] == "human"), key=lambda m: m["created_at"]
    )
    assert art.pages[0].meta["query"] == first_human["text"].strip()  # created_at order
    assert art.pages[0].meta["asked_at"] == humans[0]
    assert "<antArtifact" not in art.pages[0].text and "**Artifact:" in art.pages[0].text
    assert art.meta["url"] == f"https://claude.ai/chat/{raw['uuid']}"

    mini = parse_claude(_load(CLAUDE / "2024-10_minimal_claude-to-sqlite.json")[0])
    assert len(mini.pages) == 1
    assert "[image: CleanShot 20241017 at 22.29.542x.png]" in mini.pages[0].text
    assert "\n\nTo turn this into a bash command" in mini.pages[0].text  # leading space gone

    dog = parse_claude(_load(CLAUDE / "anthropic-data-2025-07" / "conversations.json")[0])
    page = dog.pages[0]
    assert "Dog saliva does contain" in page.text
    assert "The user is asking about" not in page.text  # the thinking block
    assert page.meta["reasoning"][0].startswith("The user is asking about")


def test_claude_projects_become_documents(settings: Settings, db: Database) -> None:
    summary = import_export(
        db, settings, CountingEmbedder(), CLAUDE / "anthropic-data-2025-07", "claude"
    )
    assert (summary.conversations, summary.turns, summary.project_docs) == (1, 1, 1)
    with db.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT kind, title, json_extract(metadata, '$.project.name'), source_key "
            "FROM documents ORDER BY id"
        ).all()
    assert [r[0] for r in rows] == ["claude", "markdown"]
    assert rows[1][1] == "Claude prompting guide.md" and rows[1][2] == "How to use Claude"
    assert rows[1][3].startswith("claude:project:0197b0fe-")


# -- importing --------------------------------------------------------------------------------
def _export(tmp_path: Path, convs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path


def _doc_rows(db: Database) -> list[tuple[Any, ...]]:
    with db.read() as conn:
        return [
            tuple(r)
            for r in conn.exec_driver_sql(
                "SELECT id, source_key, sha256, updated_at, page_count, status FROM documents "
                "ORDER BY id"
            )
        ]


def test_import_then_nothing_then_one_changed(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    convs = _all_chatgpt()
    path = _export(tmp_path, convs)
    emb = CountingEmbedder()
    first = import_export(db, settings, emb, path, "chatgpt")
    assert (first.conversations, first.new, first.turns, first.sources) == (7, 7, 33, 14)
    rows = _doc_rows(db)
    assert len(rows) == 7 and {r[5] for r in rows} == {"ready"}
    assert sum(r[4] for r in rows) == 33
    files = sorted(p for p in settings.files_dir.rglob("*") if p.is_file())

    emb.texts.clear()
    second = import_export(db, settings, emb, path, "chatgpt")
    assert (second.new, second.updated, second.unchanged) == (0, 0, 7)
    assert _doc_rows(db) == rows and emb.texts == []
    assert sorted(p for p in settings.files_dir.rglob("*") if p.is_file()) == files

    # A newer export: one conversation got a new answer text; the rest re-serialised.
    changed = json.loads(json.dumps(convs))
    target = changed[3]  # 2024-05 branches
    leaf = target["mapping"][target["current_node"]]["message"]
    leaf["content"]["parts"] = ["Why did the owl cross the road? To hoot the other side."]
    third = import_export(db, settings, emb, _export(tmp_path, changed), "chatgpt")
    assert (third.new, third.updated, third.unchanged) == (0, 1, 6)
    after = _doc_rows(db)
    diff = [a for a, b in zip(after, rows, strict=True) if a != b]
    assert [d[1] for d in diff] == [f"chatgpt:{target['id']}"]
    assert emb.texts and all("owl" in t for t in emb.texts)  # only the changed chunk
    with db.read() as conn:  # the Settings page's "last import" of this export
        (last,) = source_runs.latest(conn, "chatgpt")
    assert last["location"] == str(path.resolve()) and last["ok"]
    assert (last["summary"]["updated"], last["summary"]["unchanged"]) == (1, 6)


def test_a_stored_conversation_reingests_to_the_same_pages(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    raw = _load(CHATGPT / "2024-01_web-browsing_librechat.json")[0]
    import_export(db, settings, CountingEmbedder(), _export(tmp_path, [raw]), "chatgpt")
    with db.read() as conn:
        stored = Path(conn.exec_driver_sql("SELECT stored_path FROM documents").scalar_one())
    assert stored.read_text(encoding="utf-8") == canonical(raw)
    assert detect_kind(stored) == "chatgpt"
    again = extract_file(stored, settings)
    assert [p.text for p in again.pages] == [p.text for p in parse_chatgpt(raw).pages]
    assert again.kind == "chatgpt"
    with pytest.raises(UnsupportedFileType, match="quire import chatgpt"):
        extract_file(_export(tmp_path, _all_chatgpt()), settings)  # a whole export


def _zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return path


def test_export_zip_is_read_and_detected(tmp_path: Path, settings: Settings, db: Database) -> None:
    body = json.dumps(_all_chatgpt()).encode()
    path = _zip(
        tmp_path / "export.zip",
        {"conversations.json": body, "chat.html": b"<html></html>", "user.json": b"{}"},
    )
    assert detect_kind(path) == "chatgpt"
    summary = import_export(db, settings, CountingEmbedder(), path, "chatgpt")
    assert (summary.conversations, summary.turns) == (7, 33)
    # 2026 shards: conversations-000.json, -001.json …
    convs = _all_chatgpt()
    shards = _zip(
        tmp_path / "sharded.zip",
        {
            "conversations-000.json": json.dumps(convs[:3]).encode(),
            "conversations-001.json": json.dumps(convs[3:]).encode(),
        },
    )
    assert len(read_export(shards, "chatgpt", max_unpacked_bytes=1 << 30).conversations) == 7
    claude = _zip(
        tmp_path / "claude.zip",
        {
            "conversations.json": (
                CLAUDE / "anthropic-data-2025-07/conversations.json"
            ).read_bytes(),
            "projects.json": (CLAUDE / "anthropic-data-2025-07/projects.json").read_bytes(),
        },
    )
    assert detect_kind(claude) == "claude"
    export = read_export(claude, "claude", max_unpacked_bytes=1 << 30)
    assert (len(export.conversations), len(export.projects)) == (1, 1)


def test_bad_exports_are_refused_and_nothing_is_stored(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    good = json.dumps(_all_chatgpt())
    emb = CountingEmbedder()
    cases: list[tuple[Path, type[Exception], str]] = []
    truncated = tmp_path / "truncated.json"
    truncated.write_text(good[: len(good) // 2])
    cases.append((truncated, CorruptFile, "not valid JSON"))
    prose = tmp_path / "prose.json"
    prose.write_text("These are my chats, honest.")
    cases.append((prose, CorruptFile, "not valid JSON"))
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    cases.append((empty, EmptyFile, "empty"))
    scalar = tmp_path / "scalar.json"
    scalar.write_text("42")
    cases.append((scalar, CorruptFile, "expected a JSON array"))
    other = tmp_path / "other.json"
    other.write_bytes((CLAUDE / "2024-10_minimal_claude-to-sqlite.json").read_bytes())
    cases.append((other, UnsupportedFileType, "quire import claude"))
    bomb = tmp_path / "bomb.zip"
    _zip(bomb, {"conversations.json": b"[" + b" " * (50 << 20) + b"]"})
    cases.append((bomb, ResourceLimit, "zip bomb"))
    traversal = tmp_path / "traversal.zip"
    _zip(traversal, {"conversations.json": good.encode(), "../../etc/evil.json": b"[]"})
    cases.append((traversal, CorruptFile, "unsafe path"))
    absolute = tmp_path / "absolute.zip"
    _zip(absolute, {"/tmp/conversations.json": good.encode()})
    cases.append((absolute, CorruptFile, "unsafe path"))
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    cases.append((damaged, CorruptFile, "not a readable zip"))
    nozip = tmp_path / "nothing.zip"
    _zip(nozip, {"readme.txt": b"hello"})
    cases.append((nozip, UnsupportedFileType, "without conversations.json"))
    for path, error, message in cases:
        with pytest.raises(error, match=message):
            import_export(db, settings, emb, path, "chatgpt")
    assert _doc_rows(db) == [] and emb.texts == []
    with db.read() as conn:
        failed = source_runs.latest(conn, "chatgpt")
    assert len(failed) == len(cases) and not any(r["ok"] for r in failed)


def test_a_broken_conversation_is_skipped_the_rest_imported(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    convs: list[Any] = _all_chatgpt()
    convs.insert(2, {"title": "no id", "mapping": {}})
    convs.insert(4, "not an object")
    convs.append({"id": "x1", "title": "mapping gone wrong", "mapping": {"a": 1}})
    summary = import_export(db, settings, CountingEmbedder(), _export(tmp_path, convs), "chatgpt")
    assert summary.conversations == 7 and summary.new == 7
    assert [s[0] for s in summary.skipped] == ["no id", "#5", "mapping gone wrong"]


def _long_conversation(turns: int) -> dict[str, Any]:
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None}}
    parent = "root"
    for i in range(turns):
        for role, text in (("user", f"Question {i} about topic q{i}z?"), ("assistant", f"A{i}.")):
            nid = f"{role[0]}{i}"
            mapping[nid] = {
                "id": nid,
                "parent": parent,
                "children": [],
                "message": {
                    "id": nid,
                    "author": {"role": role},
                    "create_time": 1_700_000_000 + i,
                    "content": {"content_type": "text", "parts": [text]},
                    "recipient": "all",
                    "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
                },
            }
            mapping[parent]["children"] = [nid]
            parent = nid
    return {
        "id": "long-1",
        "title": "Ten thousand turns",
        "create_time": 1_700_000_000,
        "update_time": 1_700_010_000,
        "mapping": mapping,
        "current_node": parent,
    }


@pytest.mark.slow  # 10,000 turns stored and embedded
def test_a_conversation_of_10000_turns_in_bounded_time(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    t0 = time.process_time()  # CPU time: a busy machine does not slow it
    summary = import_export(
        db, settings, CountingEmbedder(), _export(tmp_path, [_long_conversation(10_000)]), "chatgpt"
    )
    elapsed = time.process_time() - t0
    assert (summary.conversations, summary.turns) == (1, 10_000)
    assert elapsed < 60, elapsed
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM pages").scalar() == 10_000
        heading = conn.exec_driver_sql(
            "SELECT heading_path FROM pages WHERE page = 9999"
        ).scalar_one()
    assert heading == "Question 9998 about topic q9998z?"


def test_upload_detection_of_single_conversations(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"mapping": {"a": 1}, "name": "not a chat"}')
    assert detect_kind(config) == "text"  # JSON that merely has a "mapping"
    for path in sorted(CHATGPT.glob("*.json")):
        assert detect_kind(path) == "chatgpt", path
    for path in [*CLAUDE.glob("*.json"), CLAUDE / "anthropic-data-2025-07/conversations.json"]:
        assert detect_kind(path) == "claude", path
    assert detect_kind(CLAUDE / "anthropic-data-2025-07/users.json") == "text"
