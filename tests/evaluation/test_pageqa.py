"""quire eval --pageqa: a page-exact question set over real documents, scored per question,
with bad lines, missing documents and pages out of range reported by line number."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from quire.config import Settings
from quire.evaluation import pageqa
from quire.evaluation.pageqa import Question, is_gold, normalise, read_questions, run_pageqa
from quire.storage.chunks import page_texts
from quire.storage.documents import list_documents
from quire.storage.migrate import open_database
from quire.text.table_rows import row_values
from tests.conftest import DOCS
from tests.e2e.helpers import quire
from tests.fakes.ollama import FakeOllama
from tests.fakes.rag_model import QuotingModel

pytestmark = pytest.mark.slow  # real documents ingested and scored

QUESTIONS = [
    {
        "id": "t-dmca",
        "file": "pdf/dmca-summary.pdf",
        "question": "Up to what length of vessel does the DMCA's new hull design protection apply?",
        "answer_any": ["no longer than 200 feet"],
        "pages": [17],
        "kind": "pdf",
        "qtype": "paraphrase",
    },
    {
        "id": "t-alice",
        "file": "epub/alice-epub3.epub",
        "question": "What did the label on the jar Alice took from a shelf while falling say?",
        "answer_any": ["ORANGE MARMALADE"],
        "section": "Down The Rabbit-Hole",
        "kind": "epub",
        "qtype": "paraphrase",
    },
    {
        "id": "t-pnw",
        "file": "perplexity/pnw-states-multiturn.md",
        "question": "How large is Oregon's land area in the Pacific Northwest comparison?",
        "answer_any": ["95,997 sq mi"],
        "turn": 1,
        "section": "Population and area",
        "kind": "perplexity",
        "qtype": "paraphrase",
    },
]


def write_set(path: Path, extra: list[str]) -> Path:
    lines = [json.dumps(q) for q in QUESTIONS] + extra
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


BAD_LINES = [
    "{not json",
    json.dumps(
        {
            "id": "t-noloc",
            "file": "pdf/dmca-summary.pdf",
            "question": "Where?",
            "answer_any": ["x"],
            "kind": "pdf",
        }
    ),
    json.dumps({**QUESTIONS[0], "id": "t-far", "pages": [300]}),
    json.dumps({**QUESTIONS[0], "id": "t-gone", "file": "pdf/no-such-file.pdf"}),
]


def test_bad_lines_are_reported_with_their_line_numbers(tmp_path: Path) -> None:
    questions, problems = read_questions(write_set(tmp_path / "set.jsonl", BAD_LINES))
    assert [q.id for q in questions] == ["t-dmca", "t-alice", "t-pnw", "t-far", "t-gone"]
    assert problems[0].startswith("line 4: not JSON")
    assert problems[1].startswith("line 5 (t-noloc): a pdf question needs its location")


def test_gold_units_and_text_matching() -> None:
    q = Question.model_validate({**QUESTIONS[1], "line": 2})
    docs = {7: "epub/alice-epub3.epub"}
    assert is_gold(q, 7, 3, "Alice's Adventures > Down The  Rabbit-Hole", docs)
    assert not is_gold(q, 7, 3, "The Pool of Tears", docs)
    assert not is_gold(q, 8, 3, "Down The Rabbit-Hole", docs)  # another document
    pdf = Question.model_validate({**QUESTIONS[0], "line": 1})
    assert is_gold(pdf, 1, 17, "", {1: pdf.file}) and not is_gold(pdf, 1, 16, "", {1: pdf.file})
    assert normalise("ﬁve\u00ad  sq\nmi") == "five sq mi"
    assert pageqa.contains_answer(pdf, "It is no  longer than 200 feet.") == (True, True)
    assert pageqa.contains_answer(pdf, "NO LONGER THAN 200 FEET") == (False, True)
    # A table's row quoted with its headers holds the values a set's answer reads across.
    row = pdf.model_copy(update={"answer_any": ["32 TPREL_ADD"]})
    quoted = "- “Enum: 32 · ELF Reloc Type: TPREL_ADD · Type: Static” [1]"
    assert pageqa.contains_answer(row, quoted) == (True, True)
    assert pageqa.contains_answer(row, quoted.replace("32", "33")) == (False, False)
    assert row_values("Enum: 32 · Type: Static\nA note: here.") == "32 Static\nA note: here."
    # A typewriter font's quote, read as ’ here and as ' by the set's pdftotext, is one quote.
    genotype = pdf.model_copy(update={"answer_any": ["'CCDCDCD'"]})
    assert pageqa.contains_answer(genotype, "for “tit for tat” is ’CCDCDCD’.") == (True, True)
    assert pageqa.contains_answer(genotype, "for “tit for tat” is CCDCDCD.") == (False, False)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("pageqa")
    path = write_set(tmp / "set.jsonl", BAD_LINES)
    return run_pageqa(Settings(data_dir=tmp / "data"), path, docs=DOCS)


def test_a_set_over_real_documents_is_scored_and_bad_entries_skipped(report: dict) -> None:
    problems = report["problems"]
    assert any(p.startswith("line 4: not JSON") for p in problems)
    assert any("line 6 (t-far): page 300 is out of range" in p for p in problems)
    assert any("line 7: no such document" in p for p in problems)
    overall = report["overall"]
    assert overall["questions"] == 3
    rows = {r["id"]: r for r in report["questions"]}
    assert set(rows) == {"t-dmca", "t-alice", "t-pnw"}
    # These three are found on their page (the dev set's easy ones): the measure is live.
    assert all(r["rank"] is not None and r["rank"] <= 5 for r in rows.values()), rows
    assert 0 < overall["hit@1"] <= 1 and overall["hit@5"] == 1.0
    for key in ("containment", "cited_precision", "first_citation", "cited_recall"):
        assert 0 <= overall[key] <= 1
    assert overall["search_ms"]["p50"] > 0 and overall["answer_ms"]["p50"] > 0
    assert set(report["by_kind"]) == {"pdf", "epub", "perplexity"}
    assert report["library"]["documents"] == 3


def unmarked(text: str) -> str:
    return " ".join(re.sub(r"\[\d+\]", " ", text).split())


def test_the_llm_path_cites_the_page_its_quoted_sentence_came_from(
    report: dict, tmp_path: Path
) -> None:
    """The same questions answered through map/filter/answer by a fake model (over HTTP) that
    quotes the closest sentence it was given and cites its number: the citation must lead to
    the page that holds that sentence, and the scoring must see it."""
    library = Path(str(report["library"]["path"]))  # type: ignore[index]
    model = QuotingModel()
    with FakeOllama(models=["llama3.2:latest"]) as fake:
        fake.responder = model
        settings = Settings(
            data_dir=library.parent.parent,
            llm_backends="ollama",
            ollama_url=fake.url,
            llm_retries=0,
        )
        llm = run_pageqa(settings, write_set(tmp_path / "set.jsonl", []), docs=DOCS, use_llm=True)
    assert llm["mode"] == "llm" and llm["library"]["cached"] is True
    assert {"map", "filter", "answer"} <= set(model.seen)
    asked = dict(model.answers)
    db = open_database(Settings(data_dir=library))
    try:
        with db.read() as conn:
            ids = {d["filename"]: d["id"] for d in list_documents(conn)}
            for row in llm["questions"]:
                question = next(q for q in QUESTIONS if q["id"] == row["id"])["question"]
                (number, fact), *_ = asked[question].items()
                # A quoted Perplexity row keeps its footnote markers ("[1][2] | | Oregon"),
                # which the citation check reads as citations: compare without them.
                assert unmarked(row["answer"]) == unmarked(fact), row
                assert row["answer"].endswith(f"[{number}]") and row["cited"] == 1
                (file, page, _), *_ = row["cited_places"]
                key = (ids[Path(file).name], page)
                assert normalise(fact) in normalise(page_texts(conn, [key])[key]), row
    finally:
        db.dispose()
    # One citation each, so precision is the first citation's; the fake's pick is on the
    # right page for at least two of these three.
    overall = llm["overall"]
    assert overall["cited_precision"] == overall["first_citation"] >= 2 / 3, llm["questions"]


def test_the_library_is_cached_and_the_cli_prints_a_table(
    report: dict, tmp_path_factory: pytest.TempPathFactory
) -> None:
    library = Path(str(report["library"]["path"]))  # type: ignore[index]
    data = library.parent.parent
    path = write_set(library.parent / "again.jsonl", [])
    r = quire(data, "eval", "--pageqa", str(path), "--docs", str(DOCS), "--json", timeout=240)
    assert r.returncode == 0, r.stderr
    again = json.loads(r.stdout)
    assert again["library"]["cached"] is True and again["library"]["path"] == str(library)
    assert [q["rank"] for q in again["questions"]] == [q["rank"] for q in report["questions"]]
    table = quire(
        data, "eval", "--pageqa", str(path), "--docs", str(DOCS), timeout=240, COLUMNS="160"
    )
    assert table.returncode == 0 and "hit@1" in table.stdout and "perplexity" in table.stdout
    assert "cited prec." in table.stdout
    both = quire(data, "eval", "--pageqa", str(path), "--dataset", str(DOCS))
    assert both.returncode == 2 and "one of --dataset or --pageqa" in both.stderr


def test_a_library_with_a_failed_file_is_not_cached(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "pdf").mkdir(parents=True)
    (docs / "pdf" / "dmca-summary.pdf").write_bytes(
        (DOCS / "pdf" / "dmca-summary.pdf").read_bytes()
    )
    (docs / "pdf" / "broken.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 100)
    path = tmp_path / "set.jsonl"
    path.write_text(
        json.dumps(QUESTIONS[0]) + "\n" + json.dumps({**QUESTIONS[0], "file": "pdf/broken.pdf"})
    )
    settings = Settings(data_dir=tmp_path / "data")
    first = run_pageqa(settings, path, docs=docs)
    assert any(p.startswith("pdf/broken.pdf: could not be ingested") for p in first["problems"])
    assert first["overall"]["questions"] == 1  # the rest is still scored
    # Next time the library is built anew (the failure may have been passing), not trusted.
    second = run_pageqa(settings, path, docs=docs)
    assert first["library"]["cached"] is False and second["library"]["cached"] is False
    assert second["library"]["path"] == first["library"]["path"]


def test_an_image_question_is_scored_by_the_page_of_its_locator(tmp_path: Path) -> None:
    line = {
        "id": "t-img",
        "file": "office/images/magazine-pages-2p.tif",
        "question": "What did the spinal fluid show?",
        "answer_any": ["no signs of meningitis"],
        "kind": "image",
        "locator": {"image": "office/images/magazine-pages-2p.tif", "page": 2, "pages_total": 2},
    }
    path = write_set(tmp_path / "set.jsonl", [json.dumps(line)])
    questions, problems = read_questions(path)
    [image] = [q for q in questions if q.kind == "image"]
    assert image.pages == [2] and not problems
    docs = {3: image.file}
    assert is_gold(image, 3, 2, "", docs) and not is_gold(image, 3, 1, "", docs)


def test_a_web_question_is_scored_by_the_nearest_heading_of_the_passage(tmp_path: Path) -> None:
    line = {
        "id": "t-html",
        "file": "office/html/a.html",
        "question": "Which four signals?",
        "answer_any": ["latency, traffic, errors, and saturation"],
        "kind": "html",
        "locator": {"heading": "The Four Golden Signals", "heading_level": 1},
    }
    before = {**line, "id": "t-html-0", "locator": {"heading": None, "heading_level": None}}
    path = write_set(tmp_path / "set.jsonl", [json.dumps(line), json.dumps(before)])
    questions, problems = read_questions(path)
    [web, first] = [q for q in questions if q.kind == "html"]
    assert not problems
    docs = {4: web.file}
    assert is_gold(web, 4, 6, "Monitoring > The Four Golden Signals", docs)
    assert is_gold(web, 4, 6, "The Four Golden Signals", docs)
    # The nearest heading only: a section below it, or one above it, is not the place.
    assert not is_gold(web, 4, 6, "The Four Golden Signals > Latency", docs)
    assert not is_gold(web, 4, 5, "Monitoring", docs)
    assert not is_gold(web, 5, 6, "The Four Golden Signals", docs)  # another document
    assert is_gold(first, 4, 1, "", docs) and not is_gold(first, 4, 1, "Monitoring", docs)
