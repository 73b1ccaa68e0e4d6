"""Reading a ChatGPT or Claude data export: the zip, its ``conversations.json`` (or the shards
``conversations-000.json`` …), or a folder holding them; Claude's ``projects.json`` beside it.

A zip is checked before anything is read from it, as an EPUB is (formats/epub.py: entry count,
names, unpacked size, compression ratio). Bad JSON is a :class:`CorruptFile` naming the file and
where it broke; an export of the other assistant an :class:`UnsupportedFileType` saying which
command reads it.

    export = read_export(Path("chatgpt-export.zip"), "chatgpt", max_unpacked_bytes=500 << 20)
    export.conversations  # list of conversation objects, as in the file
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from quire.errors import CorruptFile, EmptyFile, UnsupportedFileType
from quire.formats.chatgpt import Conversation
from quire.formats.chatgpt import parse_conversation as parse_chatgpt
from quire.formats.claude import parse_conversation as parse_claude
from quire.formats.detect import EXPORT_ENTRY, decode_text
from quire.formats.epub import check_zip_limits
from quire.formats.types import Extracted

Source = Literal["chatgpt", "claude"]
NAMES: dict[Source, str] = {"chatgpt": "ChatGPT", "claude": "Claude"}
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_PROJECTS = re.compile(r"(?:^|/)projects(?:\.json|/[^/]+\.json)$")


@dataclass
class Export:
    """The conversations (and Claude projects) of one export, as parsed JSON objects."""

    conversations: list[Any] = field(default_factory=list)
    projects: list[Any] = field(default_factory=list)


def _load(name: str, data: bytes) -> Any:
    if not data.strip():
        raise EmptyFile(f"{name}: the file is empty")
    try:
        return json.loads(decode_text(data))
    except json.JSONDecodeError as exc:
        raise CorruptFile(
            f"{name}: not valid JSON (truncated or damaged?): {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        ) from exc
    except RecursionError as exc:
        raise CorruptFile(f"{name}: JSON nested too deeply") from exc


def _as_list(name: str, value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value]  # one conversation (or one project) on its own
    found = type(value).__name__
    raise CorruptFile(f"{name}: expected a JSON array of conversations, found {found}")


def shape(item: Any) -> Source | None:
    """Whose conversation object this is."""
    if isinstance(item, dict):
        if "mapping" in item:
            return "chatgpt"
        if "chat_messages" in item:
            return "claude"
    return None


def _check_source(name: str, items: list[Any], source: Source) -> None:
    shapes = {shape(i) for i in items} - {None}
    if items and not shapes:
        raise UnsupportedFileType(
            f"{name}: not a {NAMES[source]} export (no conversation has "
            f"{'mapping' if source == 'chatgpt' else 'chat_messages'})"
        )
    if shapes and source not in shapes:
        other: Source = "claude" if source == "chatgpt" else "chatgpt"
        raise UnsupportedFileType(
            f"{name}: this is a {NAMES[other]} export; use `quire import {other}`"
        )


def _read_zip(path: Path, max_unpacked_bytes: int) -> Export:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise CorruptFile(f"{path.name}: not a readable zip archive ({exc})") from exc
    export = Export()
    with zf:
        infos = check_zip_limits(zf, "export zip", max_unpacked_bytes)
        shards = sorted(i.filename for i in infos if EXPORT_ENTRY.search(i.filename))
        if not shards:
            raise UnsupportedFileType(f"{path.name}: a zip without conversations.json")
        projects = sorted(i.filename for i in infos if _PROJECTS.search(i.filename))
        for names, target in ((shards, export.conversations), (projects, export.projects)):
            for entry in names:
                try:
                    data = zf.read(entry)
                except (zipfile.BadZipFile, zlib.error, OSError, EOFError, RuntimeError) as exc:
                    raise CorruptFile(f"{path.name}: {entry} cannot be read ({exc})") from exc
                target += _as_list(entry, _load(entry, data))
    return export


def _read_files(path: Path) -> Export:
    if path.is_dir():
        shards = sorted(p for p in path.glob("conversations*.json") if EXPORT_ENTRY.search(p.name))
        if not shards:
            raise UnsupportedFileType(f"{path}: no conversations.json in this folder")
        folder = path
    else:
        shards, folder = [path], path.parent
    export = Export()
    for shard in shards:
        export.conversations += _as_list(shard.name, _load(shard.name, shard.read_bytes()))
    if EXPORT_ENTRY.search(shards[0].name):
        # Claude's export keeps its projects beside the conversations.
        for extra in [folder / "projects.json", *sorted((folder / "projects").glob("*.json"))]:
            if extra.is_file():
                export.projects += _as_list(extra.name, _load(extra.name, extra.read_bytes()))
    return export


def read_export(path: Path, source: Source, *, max_unpacked_bytes: int) -> Export:
    """The conversations of an export at ``path`` (zip, JSON file or folder); raises
    CorruptFile, EmptyFile or UnsupportedFileType when it cannot be one."""
    if not path.exists():
        raise UnsupportedFileType(f"{path}: no such file or folder")
    if path.is_file():
        with path.open("rb") as fh:
            head = fh.read(4)
        if head.startswith(_ZIP_MAGIC):
            export = _read_zip(path, max_unpacked_bytes)
        else:
            export = _read_files(path)
    else:
        export = _read_files(path)
    _check_source(path.name, export.conversations, source)
    if source == "chatgpt":
        export.projects = []
    return export


def parse(item: Any, source: Source) -> Conversation:
    """One conversation object as pages; ValueError when it is not one."""
    if shape(item) != source:
        raise ValueError(f"not a {NAMES[source]} conversation")
    return parse_chatgpt(item) if source == "chatgpt" else parse_claude(item)


def extract_conversation(path: Path, source: Source) -> Extracted:
    """A file holding one conversation (what the library stores for each) as an Extracted;
    a whole export is refused with the command that imports it."""
    name = path.name
    data = path.read_bytes()
    if data.startswith(_ZIP_MAGIC):
        items: list[Any] = []
    else:
        items = _as_list(name, _load(name, data))
        _check_source(name, items, source)
    if len(items) != 1:
        what = "an export zip" if not items else f"an export of {len(items)} conversations"
        raise UnsupportedFileType(
            f"{name}: a {NAMES[source]} {what}: import it with `quire import {source}` or upload it"
        )
    try:
        conv = parse(items[0], source)
    except ValueError as exc:
        raise CorruptFile(f"{name}: {exc}") from exc
    return Extracted(source, conv.title, None, conv.pages, metadata=conv.meta)
