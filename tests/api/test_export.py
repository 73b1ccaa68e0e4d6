"""GET /api/messages/{id}/export: real extractive answers over real documents, exported as
Markdown, BibTeX and CSL JSON, and read back (issue 13: the exports round-trip)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import bibtexparser
import pytest
from bibtexparser.middlewares import LatexDecodingMiddleware
from fastapi.testclient import TestClient

from quire.config import Settings
from tests.api.library import load_library
from tests.api.sse import chat_events, first
from tests.api.test_documents import assert_error_shape
from tests.conftest import DOCS
from tests.runtime import make_app

# slow: a 100-page specification among four documents ingested
pytestmark = [pytest.mark.both_backends, pytest.mark.slow]

# Small real documents (ingest embeds every chunk; Think Complexity and Darwin, whose
# metadata tests/ingest/test_bibliographic.py reads, would take minutes here).
FILES = (
    DOCS / "pdf" / "riscv-abi-spec-v1.0.pdf",  # page labels (physical = label + 3), outline
    DOCS / "epub" / "readium-smoketest-epub2.epub",  # OPF: creator, dated creation event
    DOCS / "pdf" / "dmca-summary.pdf",  # an organisation as the author, no usable date
    DOCS / "perplexity" / "Epoch AI Models Dataset.md",  # a thread with footnoted web sources
)
REFERENCE = re.compile(r"^- \[(\d+)\] (.+)$", re.M)
CSL_TYPES = {"book", "document", "webpage", "article", "article-journal", "report"}


@pytest.fixture(scope="module")
def client(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("export") / "data",
        llm_backends="none",
        database_url=module_database_url,
    )
    with TestClient(make_app(settings)) as c:
        load_library(c, settings, FILES)
        yield c


def answer(client: TestClient, question: str) -> dict[str, Any]:
    with client.stream("POST", "/api/chat", json={"message": question}) as r:
        assert r.status_code == 200, r.read()
        events = chat_events(r.iter_lines())
    done = first(events, "done")
    return {**done, "sources": first(events, "sources")["sources"], "start": first(events, "start")}


def export(client: TestClient, message_id: int, fmt: str) -> str:
    r = client.get(f"/api/messages/{message_id}/export", params={"format": fmt})
    assert r.status_code == 200, r.text
    extension = {"markdown": "md", "bibtex": "bib", "csl": "json"}[fmt]
    assert r.headers["content-disposition"] == (
        f'attachment; filename="quire-answer-{message_id}.{extension}"'
    )
    return r.text


def parse_bibtex(text: str) -> bibtexparser.Library:
    library = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    assert library.failed_blocks == [], [b.error for b in library.failed_blocks]
    return library


QUESTIONS = (
    "Which integer registers are callee-saved in the RISC-V calling convention?",
    "Why did Sir Henry want to cross the desert to Solomon's Mines?",
    "What does the DMCA say about online service provider liability?",
    "What does the Epoch AI models dataset track about training compute?",
    "RISC-V registers and the DMCA safe harbor",  # two documents in one answer
)


@pytest.fixture(scope="module")
def answers(client: TestClient) -> list[dict[str, Any]]:
    return [answer(client, q) for q in QUESTIONS]


def test_markdown_lists_a_reference_for_every_citation(
    client: TestClient, answers: list[dict[str, Any]]
) -> None:
    for done in answers:
        assert done["citations"], done["answer"]
        text = export(client, done["message_id"], "markdown")
        body, _, references = text.partition("\n## References\n")
        assert body.strip() == done["answer"].strip()
        lines = {int(n): line for n, line in REFERENCE.findall(references)}
        cited_in_text = {int(n) for n in re.findall(r"(?<!\\)\[(\d+)\]", body)}
        assert cited_in_text and cited_in_text <= set(lines), (cited_in_text, lines)
        # Only the cited sources are listed, numbered as the answer numbers them.
        assert set(lines) == set(done["citations"])
        by_n = {s["n"]: s for s in done["sources"]}
        for n, line in lines.items():
            source = by_n[n]
            assert f"*{source['title'].split(':')[0]}" in line
            if source["kind"] == "pdf":
                label = source["page_label"]
                where = f"p. {label} (PDF p. {source['page']})" if label else f"p. {source['page']}"
                assert where in line
            if source["heading_path"]:
                assert source["heading_path"].split(" > ")[0] in line.replace("\\", "")


def test_a_threads_own_markers_in_a_quote_are_kept_and_cite_nothing(
    answers: list[dict[str, Any]],
) -> None:
    """The Epoch AI thread's rows carry the thread's own footnote markers ("Speculative (±30x)
    [1]"): quoted as written, escaped ("\\[1]"), they cite none of the answer's sources."""
    done = answers[3]
    quotes = re.findall(r"^- “(.+)” \[(\d+)\]$", done["answer"], re.M)
    assert any(re.search(r"\\\[\d+\]", quote) for quote, _ in quotes), done["answer"]
    assert not any(re.search(r"(?<!\\)\[\d+\]", quote) for quote, _ in quotes)
    assert done["citations"] == list(dict.fromkeys(int(n) for _, n in quotes))


def test_page_labels_authors_and_sections_in_references(
    client: TestClient, answers: list[dict[str, Any]]
) -> None:
    text = export(client, answers[0]["message_id"], "markdown")
    riscv = [line for line in text.splitlines() if "RISC-V ABIs Specification" in line]
    assert riscv, text
    for line in riscv:
        # The body pages are labelled from 1 after three front-matter pages.
        m = re.search(r"\*\. p\. (\d+) \(PDF p\. (\d+)\), \"(.+)\"\.", line)
        assert m, line
        assert int(m.group(2)) - int(m.group(1)) == 3
    smoke = export(client, answers[1]["message_id"], "markdown")
    # An EPUB is cited by its chapter, as the web app and the CLI name it (records.place).
    cited = r"- \[1\] Ric Wright \(2014\)\. \*SmokeTest - EPUB 2\*\. CHAPTER [IVXL]+ · "
    assert re.search(cited, smoke), smoke
    dmca = export(client, answers[2]["message_id"], "markdown")
    assert "United States Copyright Office - jmf. *The Digital Millennium Copyright Act" in dmca
    thread = export(client, answers[3]["message_id"], "markdown")
    assert "*Epoch AI Models Dataset*. turn 1" in thread


def test_bibtex_parses_back_with_its_fields(
    client: TestClient, answers: list[dict[str, Any]]
) -> None:
    seen: dict[str, dict[str, str]] = {}
    for done in answers:
        library = parse_bibtex(export(client, done["message_id"], "bibtex"))
        cited_docs = {s["document_id"] for s in done["sources"] if s["n"] in set(done["citations"])}
        assert len(library.entries) == len(cited_docs)
        keys = [e.key for e in library.entries]
        assert len(set(keys)) == len(keys)
        for entry in library.entries:
            fields = {k: str(f.value) for k, f in entry.fields_dict.items()}
            assert fields["title"]
            seen[entry.key] = {"type": entry.entry_type, **fields}
    riscv = seen["riscvabis"]  # no author or date declared: two title words
    assert riscv == {"type": "misc", "title": "RISC-V ABIs Specification"}
    smoke = seen["wright2014smoketest"]
    assert smoke == {
        "type": "book",
        "title": "SmokeTest - EPUB 2",
        "author": "Wright, Ric",
        "year": "2014",
    }
    dmca = seen["uniteddigital"]
    assert dmca["type"] == "misc" and "year" not in dmca  # its CreationDate is D:00000101
    # An organisation is kept whole in braces (BibTeX would read a family name "jmf").
    raw = bibtexparser.parse_string(export(client, answers[2]["message_id"], "bibtex"))
    assert raw.entries[0]["author"] == "{United States Copyright Office - jmf}"
    assert seen["epochai"]["type"] == "online"


def test_csl_json_items_are_well_formed(client: TestClient, answers: list[dict[str, Any]]) -> None:
    for done in answers:
        r = client.get(f"/api/messages/{done['message_id']}/export", params={"format": "csl"})
        assert r.headers["content-type"] == "application/vnd.citationstyles.csl+json"
        items = json.loads(r.text)
        assert isinstance(items, list) and items
        bib_keys = [
            e.key for e in parse_bibtex(export(client, done["message_id"], "bibtex")).entries
        ]
        assert [i["id"] for i in items] == bib_keys  # the same works, the same keys
        for item in items:
            assert isinstance(item["id"], str) and item["type"] in CSL_TYPES
            assert isinstance(item["title"], str) and item["title"]
            for name in item.get("author", []):
                assert set(name) <= {"family", "given", "literal"}
                assert all(isinstance(v, str) and v for v in name.values())
                assert "family" in name or "literal" in name
            if "issued" in item:
                parts = item["issued"]["date-parts"]
                assert isinstance(parts, list) and all(isinstance(p, int) for p in parts[0])
            for key in ("DOI", "URL", "page", "ISBN", "publisher"):
                assert isinstance(item.get(key, ""), str)
    (riscv,) = json.loads(export(client, answers[0]["message_id"], "csl"))
    assert riscv["type"] == "document" and riscv["title"] == "RISC-V ABIs Specification"
    assert re.fullmatch(r"\d+(, \d+)*", riscv["page"])  # the printed labels of cited pages
    (smoke,) = json.loads(export(client, answers[1]["message_id"], "csl"))
    assert smoke["author"] == [{"family": "Wright", "given": "Ric"}]
    assert smoke["issued"] == {"date-parts": [[2014]]} and smoke["type"] == "book"
    (dmca,) = json.loads(export(client, answers[2]["message_id"], "csl"))
    assert dmca["author"] == [{"literal": "United States Copyright Office - jmf"}]
    (thread,) = json.loads(export(client, answers[3]["message_id"], "csl"))
    assert thread["type"] == "webpage" and thread["accessed"]["date-parts"][0][0] >= 2024


def test_markdown_is_the_default_format(client: TestClient, answers: list[dict[str, Any]]) -> None:
    r = client.get(f"/api/messages/{answers[0]['message_id']}/export")
    assert r.status_code == 200 and r.headers["content-type"] == "text/markdown; charset=utf-8"
    assert "## References" in r.text


def test_bad_requests(client: TestClient, answers: list[dict[str, Any]]) -> None:
    r = client.get("/api/messages/999999/export")
    assert r.status_code == 404
    assert_error_shape(r.json(), 404, "not_found")
    question_id = answers[0]["start"]["user_message_id"]
    r = client.get(f"/api/messages/{question_id}/export")
    assert r.status_code == 400
    assert_error_shape(r.json(), 400, "bad_input")
    assert "question" in r.json()["error"]["message"]
    for bad in ("docx", "", "MARKDOWN"):
        r = client.get(f"/api/messages/{answers[0]['message_id']}/export", params={"format": bad})
        assert r.status_code == 422, bad
        assert_error_shape(r.json(), 422, "validation_error")
    for bad_id in ("0", "abc", "-1"):
        assert client.get(f"/api/messages/{bad_id}/export").status_code == 422
