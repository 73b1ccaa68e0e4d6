"""Whose notes (issue 37, item 6), on SQLite and PostgreSQL: on a library with people Alice's
private note is hers: Bob neither lists, reads, edits, searches, is cited nor exports it, through
the API, the CLI (``quire notes --as bob``) or the MCP tool; her shared note is the team's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from quire.cli import main
from quire.config import Settings
from quire.mcp import library as mcp_library
from quire.storage import access, people
from quire.storage.migrate import open_database
from tests.api.library import FILES
from tests.api.sse import chat_events
from tests.libraries import library_copy
from tests.runtime import make_app

pytestmark = pytest.mark.both_backends

SECRET = "zanzibarite"  # in Alice's private note only
SHARED = "heronshared"  # in her team note


@dataclass
class Team:
    client: TestClient
    settings: Settings
    headers: dict[str, dict[str, str]]
    private_id: int
    shared_id: int
    document_id: int

    def get(self, who: str, url: str, **kw: Any) -> Any:
        return self.client.get(url, headers=self.headers[who], **kw)

    def send(self, who: str, method: str, url: str, **kw: Any) -> Any:
        return self.client.request(method, url, headers=self.headers[who], **kw)


@pytest.fixture(scope="module")
def team(request: pytest.FixtureRequest, backend: str) -> Iterator[Team]:
    for settings in library_copy(request, backend, FILES, llm_backends="none"):
        db = open_database(settings)
        try:
            with db.write() as conn:
                people.add_user(conn, "alice")
                people.add_user(conn, "bob")
                tokens = {n: people.issue_token(conn, n, "t")[1] for n in ("alice", "bob")}
        finally:
            db.dispose()
        headers = {n: {"Authorization": f"Bearer {t}"} for n, t in tokens.items()}
        with TestClient(make_app(settings)) as client:
            docs = client.get("/api/documents", headers=headers["alice"]).json()["documents"]
            pdf = next(d for d in docs if d["kind"] == "pdf")["id"]

            ids = []
            for body, extra in (
                (f"The {SECRET} clause: only I know where the notice goes.", {}),
                (f"The {SHARED} clause, for the team.", {"visibility": "team"}),
            ):
                r = client.post(
                    "/api/notes",
                    json={"document_id": pdf, "page": 1, "body": body, **extra},
                    headers=headers["alice"],
                )
                assert r.status_code == 201, r.text
                ids.append(int(r.json()["id"]))
            private, shared = ids
            yield Team(client, settings, headers, private, shared, pdf)


def test_a_persons_note_is_private_by_default_and_hers(team: Team) -> None:
    mine = team.get("alice", f"/api/notes/{team.private_id}").json()
    assert mine["visibility"] == "private" and mine["owner"] == "alice" and mine["can_change"]
    listed = team.get("alice", "/api/notes").json()["notes"]
    assert {team.private_id, team.shared_id} <= {n["id"] for n in listed}
    hits = team.client.post(
        "/api/search", json={"query": SECRET}, headers=team.headers["alice"]
    ).json()["hits"]
    assert hits and hits[0]["kind"] == "note"


def test_bob_neither_lists_reads_nor_changes_alices_private_note(team: Team) -> None:
    listed = team.get("bob", "/api/notes").json()
    ids = {n["id"] for n in listed["notes"]}
    assert team.private_id not in ids and team.shared_id in ids
    assert SECRET not in str(listed)
    assert team.get("bob", "/api/notes", params={"q": SECRET}).json()["total"] == 0
    for method in ("GET", "PATCH", "DELETE"):
        r = team.send("bob", method, f"/api/notes/{team.private_id}", json={"body": "mine now"})
        assert r.status_code == 404 and SECRET not in r.text, (method, r.text)
    shared = team.get("bob", f"/api/notes/{team.shared_id}").json()
    assert shared["can_change"] is False and shared["owner"] == "alice"
    r = team.send("bob", "PATCH", f"/api/notes/{team.shared_id}", json={"body": "edited"})
    assert r.status_code == 403
    assert team.get("alice", f"/api/notes/{team.private_id}").json()["body"].startswith("The ")


def test_bob_neither_searches_nor_is_cited_alices_private_note(team: Team) -> None:
    r = team.client.post("/api/search", json={"query": SECRET}, headers=team.headers["bob"])
    assert r.status_code == 200 and SECRET not in str(r.json()["hits"])
    shared = team.client.post(
        "/api/search", json={"query": SHARED, "kinds": ["note"]}, headers=team.headers["bob"]
    ).json()["hits"]
    assert shared and SHARED in shared[0]["text"]
    with team.client.stream(
        "POST",
        "/api/chat",
        json={"message": f"Where does the {SECRET} clause say the notice goes?"},
        headers=team.headers["bob"],
    ) as r:
        events = chat_events(r.iter_lines())
    # The question says the word (and the events repeat it); no source or answer does.
    sources = [s for name, data in events if name == "sources" for s in data["sources"]]
    assert sources and all(SECRET not in str(s) for s in sources)
    answer = "".join(data["text"] for name, data in events if name == "token")
    assert answer and SECRET not in answer


def test_bob_exports_no_private_note_by_api_cli_or_mcp(team: Team, tmp_path: Path) -> None:
    r = team.get("bob", "/api/notes/export", params={"document_id": team.document_id})
    assert r.status_code == 200 and SHARED in r.text and SECRET not in r.text
    theirs = team.get("alice", "/api/notes/export", params={"document_id": team.document_id})
    assert SECRET in theirs.text and SHARED in theirs.text
    env = {"QUIRE_DATA_DIR": str(team.settings.data_dir), "QUIRE_LLM_BACKENDS": "none"}
    if team.settings.database_url is not None:
        env["QUIRE_DATABASE_URL"] = team.settings.database_url.get_secret_value()
    runner = CliRunner()
    listed = runner.invoke(main, ["notes", "list", "--as", "bob"], env=env)
    assert listed.exit_code == 0, listed.output
    assert SHARED in listed.output and SECRET not in listed.output
    out = tmp_path / "bob"
    exported = runner.invoke(
        main, ["notes", "export", str(team.document_id), "--as", "bob", "-o", str(out)], env=env
    )
    assert exported.exit_code == 0, exported.output
    (written,) = out.glob("*.md")
    assert SHARED in written.read_text() and SECRET not in written.read_text()
    whose = runner.invoke(main, ["notes", "list"], env=env)
    assert whose.exit_code == 1 and "--as NAME" in whose.output
    mine = runner.invoke(main, ["notes", "list", "--as", "alice"], env=env)
    assert SECRET in mine.output
    db = open_database(team.settings)
    rt: Any = SimpleNamespace(db=db)  # what the MCP tool's read uses of the runtime
    try:
        bob_reader = _reader(db, "bob")
        with access.reading_as(bob_reader):
            found = mcp_library.list_notes(rt)
        assert team.shared_id in {n.id for n in found.notes}
        assert SECRET not in found.model_dump_json()
        with access.reading_as(_reader(db, "alice")):
            everything = mcp_library.list_notes(rt)
            assert team.private_id in {n.id for n in everything.notes}
            # One at a time, by next_offset: the same notes, in the same order, then no more.
            paged, offset = [], 0
            while offset is not None and len(paged) <= everything.total:
                one = mcp_library.list_notes(rt, limit=1, offset=offset)
                paged += [n.id for n in one.notes]
                offset = one.next_offset
            assert everything.total >= 2 and everything.next_offset is None
            assert paged == [n.id for n in everything.notes]
    finally:
        db.dispose()


def _reader(db: Any, name: str) -> access.Reader:
    with db.read() as conn:
        user = people.get_user(conn, name)
    return access.Reader(user.id, user.name, user.admin)
