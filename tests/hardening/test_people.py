"""People on one library (issue 17): the real API (uvicorn), worker and nginx, on SQLite and on
PostgreSQL. Alice and Bob each keep a private document and their own conversations; a team
document is everyone's. Every route of the app is tried as Bob against Alice's things (the
test fails when a route is added without a check here): none shows her private document, its
pages, original, job or search hits, nor her conversations and answers. Also: what the service
token and an admin may do, the upload of bytes someone holds privately, `quire users`, and a
token revoked while an answer streams (the fake Ollama writes it slowly)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from quire.app import create_app
from quire.config import Settings
from quire.storage import people
from quire.storage.migrate import open_database
from tests.api.sse import parse_sse
from tests.api.test_documents import assert_error_shape
from tests.e2e.browser_helpers import CHROMIUM, CHROMIUM_ARGS, built_spa
from tests.e2e.helpers import quire, wait_until
from tests.e2e.stack import Stack, run_stack
from tests.fakes.chat import Reply
from tests.fakes.ollama import FakeOllama
from tests.fakes.rag_model import RagModel
from tests.hardening.test_access import _concrete, _every_endpoint
from tests.mcp.helpers import failed, ok, over_http, run

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

SERVICE_TOKEN = "service-token-for-the-team-0123456789"
ALICE_SECRET = "# Diary\n\nThe zanzibarite crystal hums at midnight in the east lab.\n"
BOB_SECRET = "# Notes\n\nThe quokkalith fossil rests under the oak desk.\n"
NOTE_SECRET = "marshglow"  # in Alice's private note only
TEAM_PLAN = "# Plan\n\nThe heron project meets every Tuesday by the weir.\n"


@dataclass
class Team:
    stack: Stack
    settings: Settings
    fake: FakeOllama
    tokens: dict[str, str] = field(default_factory=dict)  # user -> token
    docs: dict[str, int] = field(default_factory=dict)  # alice, bob, team -> document id
    jobs: dict[str, int] = field(default_factory=dict)
    conversations: dict[str, int] = field(default_factory=dict)  # user -> conversation id
    answers: dict[str, int] = field(default_factory=dict)  # user -> assistant message id
    notes: dict[str, int] = field(default_factory=dict)  # alice's private note, shared note

    clients: dict[str, httpx.Client] = field(default_factory=dict)

    def as_(self, user: str) -> httpx.Client:
        """A client sending ``user``'s token (one per user, closed with the fixture)."""
        if user not in self.clients:
            self.clients[user] = httpx.Client(
                base_url=self.stack.api,
                headers={"Authorization": f"Bearer {self.tokens[user]}"},
                timeout=60,
            )
        return self.clients[user]


def _upload(c: httpx.Client, name: str, body: str, visibility: str | None) -> dict[str, Any]:
    data = {"visibility": visibility} if visibility else {}
    r = c.post("/api/documents", files={"files": (name, body.encode())}, data=data)
    assert r.status_code == 202, r.text
    out: dict[str, Any] = r.json()["files"][0]
    return out


def _chat(c: httpx.Client, message: str, **extra: Any) -> list[tuple[str, Any]]:
    with c.stream("POST", "/api/chat", json={"message": message, **extra}) as r:
        assert r.status_code == 200, r.read()
        return list(parse_sse(r.iter_lines()))


def _fill(t: Team) -> None:
    """Alice's and Bob's private documents, Alice's team document, a conversation each."""
    alice, bob = t.as_("alice"), t.as_("bob")

    for who, c, name, body, vis in (
        ("alice", alice, "alice-diary.md", ALICE_SECRET, "private"),
        ("bob", bob, "bob-notes.md", BOB_SECRET, "private"),
        ("team", alice, "team-plan.md", TEAM_PLAN, None),
    ):
        got = _upload(c, name, body, vis)
        t.docs[who], t.jobs[who] = got["document_id"], got["job_id"]

    def ready() -> bool:
        return all(
            c.get(f"/api/documents/{t.docs[who]}").json()["status"] == "ready"
            for who, c in (("alice", alice), ("bob", bob), ("team", bob))
        )

    wait_until(ready, 180, "the three documents to be ready")
    # Alice's notes on the team document (issue 37): a private one, with her secret word, and
    # one she shares; the searches and answers below never show Bob the first.
    for key, body, vis in (
        ("private", f"My {NOTE_SECRET} thought on the plan.", None),
        ("shared", "The team meets by the weir on Tuesdays.", "team"),
    ):
        r = alice.post(
            "/api/notes",
            json={"document_id": t.docs["team"], "page": 1, "body": body, "visibility": vis},
        )
        assert r.status_code == 201, r.text
        t.notes[key] = r.json()["id"]
    for who, c, question in (
        ("alice", alice, "What hums at midnight?"),
        ("bob", bob, "Where is the fossil?"),
    ):
        events = _chat(c, question, llm=False)
        done = dict(events)["done"]
        t.conversations[who], t.answers[who] = (
            done["conversation_id"],
            done["message_id"],
        )


@pytest.fixture(scope="module")
def team(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[Team]:
    tmp = tmp_path_factory.mktemp("people")
    settings = Settings(data_dir=tmp / "data", database_url=module_database_url)
    db = open_database(settings)
    tokens = {}
    with db.write() as conn:
        for name, admin in (("alice", False), ("bob", False), ("root", True)):
            people.add_user(conn, name, admin=admin)
            tokens[name] = people.issue_token(conn, name, "tests")[1]
    db.dispose()
    tokens["service"] = SERVICE_TOKEN
    env = {"QUIRE_API_TOKEN": SERVICE_TOKEN, "QUIRE_LLM_BACKENDS": "none"}
    if module_database_url:
        env["QUIRE_DATABASE_URL"] = module_database_url
    with FakeOllama(models=["llama3.2:latest"]) as fake:
        env.update(QUIRE_LLM_BACKENDS="ollama", QUIRE_OLLAMA_URL=fake.url, QUIRE_LLM_RETRIES="0")
        with run_stack(tmp, dist=built_spa(), **env) as stack:
            t = Team(stack, settings, fake, tokens)
            _fill(t)
            yield t
            for client in t.clients.values():
                client.close()


def _not_found(r: httpx.Response) -> None:
    assert r.status_code == 404, (r.request.method, r.request.url, r.status_code, r.text)
    assert_error_shape(r.json(), 404, "not_found")
    assert "zanzibarite" not in r.text and "alice-diary" not in r.text
    assert NOTE_SECRET not in r.text


def test_bob_reaches_nothing_of_alices_on_any_route(team: Team) -> None:
    a_doc, a_job = team.docs["alice"], team.jobs["alice"]
    a_conv, a_msg = team.conversations["alice"], team.answers["alice"]
    bob = team.as_("bob")

    def no_secret(r: httpx.Response) -> None:
        assert r.status_code < 500, r.text
        assert "zanzibarite" not in r.text and "alice-diary" not in r.text, r.text
        assert NOTE_SECRET not in r.text, r.text

    def documents() -> None:
        r = bob.get("/api/documents")
        ids = {d["id"] for d in r.json()["documents"]}
        assert ids == {team.docs["bob"], team.docs["team"]}, ids
        mine = {d["id"]: d for d in r.json()["documents"]}
        assert mine[team.docs["bob"]]["visibility"] == "private"
        assert mine[team.docs["bob"]]["owner"] == "bob"
        assert mine[team.docs["team"]]["visibility"] == "team"
        assert mine[team.docs["team"]]["owner"] == "alice"
        # What he may change: his own, not Alice's team document (the web app hides the rest).
        assert mine[team.docs["bob"]]["can_change"] is True
        assert mine[team.docs["team"]]["can_change"] is False

    def upload() -> None:
        # Alice's exact bytes: refused, without saying whose or which document.
        r = bob.post("/api/documents", files={"files": ("copy.md", ALICE_SECRET.encode())})
        assert r.status_code == 409, r.text
        assert "privately" in r.json()["error"]["message"]
        assert str(a_doc) not in r.text and "alice" not in r.text.lower()

    def search() -> None:
        r = bob.post("/api/search", json={"query": "zanzibarite crystal hums"})
        assert r.status_code == 200
        assert all(h["document_id"] != a_doc for h in r.json()["hits"])
        assert "zanzibarite" not in str(r.json()["hits"])  # the query itself says it
        # Asking for her document by id: it does not exist for Bob.
        _not_found(bob.post("/api/search", json={"query": "crystal", "document_ids": [a_doc]}))
        # His own private document is found.
        r = bob.post("/api/search", json={"query": "quokkalith fossil"})
        assert r.json()["hits"][0]["document_id"] == team.docs["bob"]

    def chat() -> None:
        events = _chat(bob, "What hums at midnight in the east lab?", llm=False)
        assert all("zanzibarite" not in str(data) for _, data in events)
        r = bob.post(
            "/api/chat", json={"message": "and then?", "conversation_id": a_conv, "llm": False}
        )
        _not_found(r)

    def conversations() -> None:
        r = bob.get("/api/conversations")
        ids = {c["id"] for c in r.json()["conversations"]}
        assert a_conv not in ids and team.conversations["bob"] in ids

    def completions() -> None:
        r = bob.post(
            "/v1/chat/completions",
            json={
                "model": "quire-extractive",
                "messages": [{"role": "user", "content": "What hums at midnight?"}],
            },
        )
        assert r.status_code == 200, r.text
        no_secret(r)

    def languages() -> None:
        r = bob.get("/api/library/languages")
        counted = sum(x["documents"] for x in r.json()["languages"]) + r.json()["undetected"]
        assert counted == 2, r.json()

    def sources() -> None:
        r = bob.get("/api/library/sources")
        assert sum(o["documents"] for o in r.json()["origins"]) == 2, r.json()

    def notes() -> None:
        r = bob.get("/api/notes")
        ids = {n["id"] for n in r.json()["notes"]}
        assert team.notes["shared"] in ids and team.notes["private"] not in ids, ids
        no_secret(r)
        r = bob.get("/api/notes", params={"q": NOTE_SECRET})
        assert r.json()["total"] == 0
        r = bob.post("/api/search", json={"query": f"{NOTE_SECRET} thought"})
        assert NOTE_SECRET not in str(r.json()["hits"])

    def add_note() -> None:
        _not_found(bob.post("/api/notes", json={"document_id": a_doc, "page": 1, "body": "x"}))

    def export_notes() -> None:
        r = bob.get("/api/notes/export", params={"document_id": team.docs["team"]})
        assert r.status_code == 200 and "weir on Tuesdays" in r.text
        no_secret(r)
        _not_found(bob.get("/api/notes/export", params={"document_id": a_doc}))

    private_note = f"/api/notes/{team.notes['private']}"

    def me() -> None:
        assert bob.get("/api/me").json() == {
            "mode": "people",
            "user": {"id": bob.get("/api/me").json()["user"]["id"], "name": "bob", "admin": False},
        }

    def mcp() -> None:
        async def main() -> None:
            async with over_http(f"{team.stack.api}/mcp", team.tokens["bob"]) as client:
                hits = ok(await client.call_tool("search", {"query": "zanzibarite crystal"}))
                assert all(h["document_id"] != a_doc for h in hits["hits"])
                listed = ok(await client.call_tool("list_documents", {}))
                assert a_doc not in {d["id"] for d in listed["documents"]}
                page = await client.call_tool("get_page", {"document_id": a_doc, "page": 1})
                assert "does not exist" in failed(page, "not_found")
                answer = ok(await client.call_tool("ask", {"question": "What hums?", "llm": False}))
                assert "zanzibarite" not in str(answer)
                listed = ok(await client.call_tool("list_notes", {}))
                assert team.notes["shared"] in {n["id"] for n in listed["notes"]}
                assert NOTE_SECRET not in str(listed)

        run(main)

    def admin_only(method: str, url: str, body: dict[str, str] | None = None) -> Callable[[], None]:
        def check() -> None:
            r = bob.request(method, url, json=body)
            assert r.status_code == 403, r.text
            assert_error_shape(r.json(), 403, "forbidden")

        return check

    def static(url: str) -> Callable[[], None]:
        return lambda: no_secret(bob.get(url))

    checks: dict[tuple[str, str], Callable[[], None]] = {
        ("GET", "/api/documents"): documents,
        ("POST", "/api/documents"): upload,
        ("GET", "/api/documents/{document_id}"): lambda: _not_found(
            bob.get(f"/api/documents/{a_doc}")
        ),
        ("DELETE", "/api/documents/{document_id}"): lambda: _not_found(
            bob.delete(f"/api/documents/{a_doc}")
        ),
        ("POST", "/api/documents/{document_id}/reingest"): lambda: _not_found(
            bob.post(f"/api/documents/{a_doc}/reingest")
        ),
        ("POST", "/api/documents/{document_id}/sources/add"): lambda: _not_found(
            bob.post(f"/api/documents/{a_doc}/sources/add")
        ),
        # A link to a cloud metadata address: refused before anything is fetched or stored.
        ("POST", "/api/documents/url"): lambda: no_secret(
            bob.post("/api/documents/url", json={"url": "http://169.254.169.254/latest/"})
        ),
        ("GET", "/api/documents/{document_id}/pages"): lambda: _not_found(
            bob.get(f"/api/documents/{a_doc}/pages")
        ),
        ("GET", "/api/documents/{document_id}/pages/{page}"): lambda: _not_found(
            bob.get(f"/api/documents/{a_doc}/pages/1")
        ),
        ("GET", "/api/documents/{document_id}/file"): lambda: _not_found(
            bob.get(f"/api/documents/{a_doc}/file")
        ),
        ("GET", "/api/documents/{document_id}/pages/{page}/image"): lambda: _not_found(
            bob.get(f"/api/documents/{a_doc}/pages/1/image")
        ),
        ("GET", "/api/documents/{document_id}/rendition"): lambda: _not_found(
            bob.get(f"/api/documents/{a_doc}/rendition")
        ),
        ("GET", "/api/jobs/{job_id}"): lambda: _not_found(bob.get(f"/api/jobs/{a_job}")),
        ("GET", "/api/jobs/{job_id}/events"): lambda: _not_found(
            bob.get(f"/api/jobs/{a_job}/events")
        ),
        ("GET", "/api/notes"): notes,
        ("POST", "/api/notes"): add_note,
        ("GET", "/api/notes/export"): export_notes,
        # The citation styles: the same list for everyone, nothing of anyone's.
        ("GET", "/api/notes/styles"): lambda: no_secret(bob.get("/api/notes/styles")),
        ("GET", "/api/notes/{note_id}"): lambda: _not_found(bob.get(private_note)),
        ("PATCH", "/api/notes/{note_id}"): lambda: _not_found(
            bob.patch(private_note, json={"body": "mine"})
        ),
        ("DELETE", "/api/notes/{note_id}"): lambda: _not_found(bob.delete(private_note)),
        ("POST", "/api/search"): search,
        ("POST", "/api/chat"): chat,
        ("GET", "/api/conversations"): conversations,
        ("GET", "/api/conversations/{conversation_id}"): lambda: _not_found(
            bob.get(f"/api/conversations/{a_conv}")
        ),
        ("DELETE", "/api/conversations/{conversation_id}"): lambda: _not_found(
            bob.delete(f"/api/conversations/{a_conv}")
        ),
        ("GET", "/api/messages/{message_id}/export"): lambda: _not_found(
            bob.get(f"/api/messages/{a_msg}/export")
        ),
        ("POST", "/api/messages/{message_id}/feedback"): lambda: _not_found(
            bob.post(f"/api/messages/{a_msg}/feedback", json={"rating": -1})
        ),
        ("POST", "/v1/chat/completions"): completions,
        ("GET", "/v1/models"): static("/v1/models"),
        ("GET", "/api/llm"): static("/api/llm"),
        ("GET", "/api/library/languages"): languages,
        ("GET", "/api/library/sources"): sources,
        ("GET", "/api/me"): me,
        ("GET", "/api/health"): static("/api/health"),
        ("GET", "/api/perplexity/status"): admin_only("GET", "/api/perplexity/status"),
        ("POST", "/api/perplexity/sync"): admin_only("POST", "/api/perplexity/sync"),
        # Which model answers is the library's: only an admin pulls or chooses one.
        ("GET", "/api/models"): static("/api/models"),
        ("POST", "/api/models/pull"): admin_only("POST", "/api/models/pull", {"name": "x:1b"}),
        ("POST", "/api/models/reranker/pull"): admin_only("POST", "/api/models/reranker/pull"),
        ("PUT", "/api/models/use"): admin_only("PUT", "/api/models/use", {"name": "x:1b"}),
        ("DELETE", "/api/models/use"): admin_only("DELETE", "/api/models/use"),
        ("GET", "/mcp"): mcp,
        # The API's own documentation: no library data in it.
        ("GET", "/api/docs"): static("/api/docs"),
        ("HEAD", "/api/docs"): static("/api/docs"),
        ("GET", "/api/openapi.json"): static("/api/openapi.json"),
        ("HEAD", "/api/openapi.json"): static("/api/openapi.json"),
        ("GET", "/docs/oauth2-redirect"): static("/docs/oauth2-redirect"),
        ("HEAD", "/docs/oauth2-redirect"): static("/docs/oauth2-redirect"),
    }
    every = _every_endpoint(create_app(team.settings))
    assert set(checks) == every, f"routes without a check here: {every - set(checks)}"
    for _endpoint, check in sorted(checks.items()):
        check()
    # Nothing of Alice's changed on the way.
    alice = team.as_("alice")
    assert alice.get(f"/api/documents/{a_doc}").json()["status"] == "ready"
    assert len(alice.get(f"/api/conversations/{a_conv}").json()["messages"]) == 2
    original = alice.get(f"/api/documents/{a_doc}/file")
    assert original.status_code == 200 and "zanzibarite" in original.text
    r = alice.post("/api/search", json={"query": "zanzibarite"})
    assert r.json()["hits"][0]["document_id"] == a_doc
    assert _concrete("/api/documents/{document_id}") == "/api/documents/1"


@pytest.mark.sqlite_only  # the web app is the same on either backend
def test_the_web_app_shows_who_is_signed_in(team: Team) -> None:
    """Through nginx in Chromium: the token prompt, then Alice's name, her private badge, the
    private upload choice, and no trace of Bob's document; signing out asks again."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ctx = browser.new_context(base_url=team.stack.web, viewport={"width": 1280, "height": 860})
        ctx.set_default_timeout(20_000)
        pg = ctx.new_page()
        pg.goto("/library")
        expect(pg.get_by_role("alertdialog")).to_contain_text("personal token")
        pg.get_by_role("textbox", name="API token").fill(team.tokens["alice"])
        pg.get_by_role("button", name="Save").click()
        expect(pg.get_by_test_id("signed-in-user")).to_contain_text("Signed in as alice")
        expect(pg.get_by_text("Diary", exact=True)).to_be_visible()
        expect(pg.get_by_text("Plan", exact=True)).to_be_visible()
        expect(pg.get_by_test_id("private-badge")).to_have_count(1)
        assert "quokkalith" not in pg.content() and "bob-notes" not in pg.content()
        pg.goto("/upload")
        expect(pg.get_by_test_id("upload-private")).to_be_visible()
        pg.get_by_test_id("sign-out").click()
        expect(pg.get_by_role("alertdialog")).to_contain_text("personal token")
        expect(pg.get_by_test_id("signed-in-user")).to_have_count(0)
        ctx.close()
        browser.close()


def test_service_token_reads_the_team_and_admins_change_team_documents(team: Team) -> None:
    service, bob, root = team.as_("service"), team.as_("bob"), team.as_("root")
    ids = {d["id"] for d in service.get("/api/documents").json()["documents"]}
    assert ids == {team.docs["team"]}
    assert service.get("/api/me").json() == {"mode": "people", "user": None}
    _not_found(service.get(f"/api/conversations/{team.conversations['alice']}"))
    # Private needs a person.
    r = service.post(
        "/api/documents",
        files={"files": ("s.md", b"# S\n\nsecret\n")},
        data={"visibility": "private"},
    )
    assert r.status_code == 400 and "person" in r.json()["error"]["message"]
    # Bob may read the team's plan but not re-ingest or delete Alice's document.
    r = bob.post(f"/api/documents/{team.docs['team']}/reingest")
    assert r.status_code == 403, r.text
    assert_error_shape(r.json(), 403, "forbidden")
    assert bob.delete(f"/api/documents/{team.docs['team']}").status_code == 403
    # The admin may; and sees the Perplexity status (library-wide).
    assert root.post(f"/api/documents/{team.docs['team']}/reingest").status_code == 202
    assert root.get("/api/perplexity/status").status_code == 200
    assert root.get("/api/me").json()["user"]["admin"] is True
    # ... but not Alice's private document either.
    _not_found(root.get(f"/api/documents/{team.docs['alice']}"))
    wait_until(
        lambda: bob.get(f"/api/documents/{team.docs['team']}").json()["status"] == "ready",
        120,
        "the re-ingested team document",
    )


def test_wrong_and_missing_tokens_are_refused_once_there_are_people(team: Team) -> None:
    for headers in ({}, {"Authorization": "Bearer qt_not-a-token-of-anyone-at-all"}):
        r = httpx.get(f"{team.stack.api}/api/documents", headers=headers)
        assert r.status_code == 401
        assert_error_shape(r.json(), 401, "unauthorized")
    assert httpx.get(f"{team.stack.api}/api/health").status_code == 200


def test_users_cli_and_a_token_revoked_while_an_answer_streams(team: Team) -> None:
    data = team.stack.data
    url = team.settings.database_url
    extra = {"QUIRE_DATABASE_URL": url.get_secret_value()} if url else {}
    r = quire(data, "users", "add", "carol", timeout=120, **extra)
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip().splitlines()[-1]
    assert token.startswith("qt_") and len(token) > 40
    again = quire(data, "users", "add", "carol", timeout=120, **extra)
    assert again.returncode == 1 and "already exists" in again.stderr
    listed = quire(data, "users", "list", timeout=120, **extra)
    assert "carol" in listed.stdout and "root" in listed.stdout
    tokens = quire(data, "users", "tokens", "carol", timeout=120, **extra)
    assert token[:10] in tokens.stdout and token not in tokens.stdout  # only the prefix shows
    db = open_database(team.settings)
    with db.read() as conn:
        (carol_token,) = people.list_tokens(conn, "carol")
        # At rest: its SHA-256, never the token.
        stored = conn.exec_driver_sql("SELECT token_hash FROM api_tokens").scalars().all()
    assert people.token_hash(token) in stored and token not in stored

    team.fake.reset()
    long_answer = " ".join(f"w{i}" for i in range(600))
    team.fake.responder = RagModel(
        overrides={"answer": lambda _: Reply(long_answer, token_delay_s=0.05)}
    )
    team.tokens["carol"] = token
    carol = team.as_("carol")
    assert carol.get("/api/me").json()["user"]["name"] == "carol"
    events: list[tuple[str, Any]] = []
    started = time.monotonic()
    with carol.stream(
        "POST", "/api/chat", json={"message": "What does the heron project do?"}
    ) as s:
        assert s.status_code == 200
        lines = s.iter_lines()
        for name, payload in parse_sse(lines):
            events.append((name, payload))
            if name == "token" and sum(1 for n, _ in events if n == "token") == 5:
                revoked = quire(data, "users", "revoke", str(carol_token.id), timeout=120, **extra)
                assert revoked.returncode == 0, revoked.stderr
    names = [n for n, _ in events]
    assert "done" not in names, names
    assert names[-1] == "error", names[-3:]
    assert events[-1][1]["error"]["code"] == "unauthorized"
    assert "revoked" in events[-1][1]["error"]["message"]
    assert time.monotonic() - started < 25  # the 600-token answer would take 30 s
    # Refused from now on; the LLM stream was closed, the answer kept as interrupted.
    assert carol.get("/api/me").status_code == 401
    wait_until(lambda: team.fake.stream_outcomes["cancelled"] >= 1, 20, "the LLM stream's close")
    with db.read() as conn:
        (row,) = conn.exec_driver_sql(
            "SELECT m.status FROM messages m JOIN conversations c ON c.id = m.conversation_id "
            "JOIN users u ON u.id = c.owner_id WHERE u.name = 'carol' AND m.role = 'assistant'"
        ).all()
    db.dispose()
    assert row[0] == "interrupted"
