"""Script and language detection, the tesseract language chosen from it (with fallbacks when a
language pack is missing), and text in other scripts that arrives badly: legacy encodings,
vertical EPUBs, and one 10 MB run of CJK without a space or a stop."""

from __future__ import annotations

import io
import json
import random
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from quire.config import Settings
from quire.formats.detect import decode_text, detect_kind, legacy_encoding
from quire.formats.extract import extract_file
from quire.formats.pdf.ocr import check_available, installed_fallbacks, tesseract_language
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.retrieval.filters import Filter
from quire.storage.db import Database
from quire.text.scripts import tag_language, text_language
from tests import legs
from tests.fakes import FakeOllama
from tests.ingest.test_epub import chapter, make_epub

JA = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。"
ZH_HANS = "这是一本关于机器学习的书。我们在这里讨论深度学习的基本原理。"
ZH_HANT = "這是一本關於機器學習的書。我們在這裡討論深度學習的基本原理。"
KO = "이것은 기계 학습에 관한 책입니다. 우리는 여기서 딥러닝의 기본 원리를 논의합니다."


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (JA, "ja"),
        (ZH_HANS, "zh-Hans"),
        (ZH_HANT, "zh-Hant"),
        ("山水花鳥風月", "zh"),  # Han with no simplified or traditional tell
        (KO, "ko"),
        ("هذا كتاب عن تعلم الآلة والشبكات العصبية", "ar"),
        ("The quick brown fox jumps over the lazy dog", "latin"),
        (JA + " Abstract: we study cats and their names in literature.", "ja"),
        ("Figure 3", None),
        ("", None),
    ],
)
def test_text_language(text: str, language: str | None) -> None:
    assert text_language(text) == language


@pytest.mark.parametrize(
    ("tag", "language"),
    [
        ("ja-JP", "ja"),
        ("zh-TW", "zh-Hant"),
        ("zh-Hant-HK", "zh-Hant"),
        ("zh_CN", "zh-Hans"),
        ("zh", "zh-Hans"),
        ("ar", "ar"),
        ("en-US", "latin"),
        ("x-klingon", None),
        ("", None),
    ],
)
def test_tag_language(tag: str, language: str | None) -> None:
    assert tag_language(tag) == language


@pytest.mark.parametrize(
    ("language", "vertical", "code"),
    [
        ("ja", True, "jpn_vert"),
        ("ja", False, "jpn"),
        ("ja", None, "jpn+jpn_vert"),
        ("zh-Hans", None, "chi_sim"),  # simplified Chinese is mostly horizontal
        ("zh-Hant", True, "chi_tra_vert"),
        ("ko", False, "kor"),
        ("ar", True, "ara"),  # no vertical model for Arabic
        ("latin", None, None),
    ],
)
def test_tesseract_language(language: str, vertical: bool | None, code: str | None) -> None:
    assert tesseract_language(language, vertical) == code


def test_missing_language_data_falls_back_with_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tesseract's own data folder with only some of the setup's languages in it, so which
    # ones are missing does not depend on the machine.
    tessdata = Path(
        subprocess.run(
            ["tesseract", "--list-langs"], capture_output=True, text=True, check=True
        ).stdout.split('"')[1]
    )
    for code in ("eng", "jpn", "jpn_vert", "kor"):
        (tmp_path / f"{code}.traineddata").symlink_to(tessdata / f"{code}.traineddata")
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path))
    assert check_available("eng") == {"eng", "jpn", "jpn_vert", "kor"}
    chosen, notices = installed_fallbacks(
        {1: "jpn_vert", 2: "heb", 3: "heb", 4: "kor_vert", 5: "jpn+jpn_vert"}, "eng"
    )
    assert chosen == {1: "jpn_vert", 2: "eng", 3: "eng", 4: "kor", 5: "jpn+jpn_vert"}
    assert len(notices) == 2
    heb, kor = notices
    assert "apt-get install tesseract-ocr-heb" in heb and "pages 2, 3" in heb
    assert "tesseract-ocr-kor-vert" in kor and "page 4 read as kor" in kor


def _epub(path: Path, xhtml: bytes) -> Path:
    """make_epub's book with its one chapter replaced by raw bytes (any encoding)."""
    make_epub(path, {"c1.xhtml": ""})
    with zipfile.ZipFile(path) as zf:
        entries = {info.filename: zf.read(info) for info in zf.infolist()}
    entries["OEBPS/c1.xhtml"] = xhtml
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    path.write_bytes(buf.getvalue())
    return path


VERTICAL_CSS = "<style>html { writing-mode: vertical-rl; -epub-writing-mode: vertical-rl; }</style>"


def test_vertical_epub_keeps_its_text_order(tmp_path: Path) -> None:
    xhtml = chapter(f"<h1>第一章</h1><p>{JA}</p><p>{ZH_HANT}</p>").replace(
        "</head>", VERTICAL_CSS + "</head>"
    )
    extracted = extract_file(_epub(tmp_path / "v.epub", xhtml.encode()), Settings())
    (page,) = extracted.pages
    assert page.text == f"第一章\n\n{JA}\n\n{ZH_HANT}"


@pytest.mark.parametrize(
    ("encoding", "declare"),
    [("shift_jis", True), ("shift_jis", False), ("gbk", True), ("gbk", False)],
)
def test_epub_chapter_in_a_legacy_encoding(tmp_path: Path, encoding: str, declare: bool) -> None:
    text = JA if encoding == "shift_jis" else ZH_HANS
    xhtml = chapter(f"<p>{text}</p>")
    # Declared correctly, or declared UTF-8 while the bytes are not.
    xhtml = xhtml.replace('encoding="UTF-8"', f'encoding="{encoding}"' if declare else "")
    extracted = extract_file(_epub(tmp_path / "c.epub", xhtml.encode(encoding)), Settings())
    assert [p.text for p in extracted.pages] == [text]


@pytest.mark.parametrize(
    ("text", "encoding", "kind"),
    [
        (f"{JA}\n\n何でも薄暗い所で泣いていた。\n", "shift_jis", "text"),
        (f"# 第一章\n\n{JA}\n\n- 一つ\n- 二つ\n", "shift_jis", "markdown"),
        (f"{JA}\n", "euc_jp", "text"),
        (f"{ZH_HANS}\n", "gbk", "text"),
        (f"{ZH_HANT}\n", "big5", "text"),
        (f"{KO}\n", "euc_kr", "text"),
        ("Grüße aus Köln, schöne Straße.\n", "cp1252", "text"),
    ],
)
def test_legacy_encoded_text_files_decode(
    tmp_path: Path, text: str, encoding: str, kind: str
) -> None:
    data = text.encode(encoding)
    path = tmp_path / "doc.txt"
    path.write_bytes(data)
    assert decode_text(data) == text
    assert detect_kind(path) == kind
    pages = extract_file(path, Settings()).pages
    assert "".join(p.text for p in pages).replace("\n", "") == text.replace("\n", "")


def test_a_short_korean_line_is_not_read_as_japanese() -> None:
    assert legacy_encoding(KO[:9].encode("euc_kr")) == "cp949"


@pytest.mark.slow
def test_ten_megabytes_of_one_cjk_run_ingest_and_search(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    rng = random.Random(18)
    alphabet = (
        "吾輩猫名前無生見当薄暗所泣事記憶人間始種族中一番獰悪書生あいうえおかきくけこさしすせそ"
    )
    run = "".join(rng.choices(alphabet, k=3_500_000))  # 3 bytes each in UTF-8: 10.5 MB
    needle = "量子計算機"  # none of its characters is in the alphabet: one place only
    path = tmp_path / "run.txt"
    path.write_text(run[:2_000_000] + needle + run[2_000_000:], encoding="utf-8")
    with FakeOllama(["nomic-embed-text:latest"], dim=16) as fake:
        settings = settings.model_copy(update={"embedder": "ollama", "ollama_url": fake.url})
        intake = add_file(db, settings.files_dir, path, path.name, max_bytes=20 << 20)
        started = time.monotonic()
        worker = Worker(settings, db=db)
        worker.run(drain=True)
        worker.close()
        elapsed = time.monotonic() - started
    with db.read() as conn:
        status, detail = conn.exec_driver_sql(
            "SELECT status, detail FROM ingest_jobs WHERE id = ?", (intake.job_id,)
        ).one()
        longest = conn.exec_driver_sql("SELECT max(length(text)) FROM page_chunks").scalar_one()
        hits = legs.lexical(conn).bm25(conn, "計算", limit=5, flt=Filter())
        (where,) = conn.exec_driver_sql(
            "SELECT text FROM page_chunks WHERE id = ?", (hits[0][0],)
        ).one()
    assert status == "done", detail
    assert longest <= settings.chunk_chars + settings.chunk_chars // 10
    assert needle in where
    assert elapsed < 120, json.loads(detail)["timings"]
