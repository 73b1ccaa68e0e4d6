from __future__ import annotations

import pytest

from quire.text.clean import clean_page_text, strip_running_headers


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("an exam-\nple of it", "an example of it"),
        ("the infor-\n  mation age", "the information age"),
        ("the Anglo-\nSaxon kings", "the Anglo-Saxon kings"),
        ("the COVID-\n19 wave", "the COVID-19 wave"),
        ("a state-of-the-\nart parser", "a state-of-the-art parser"),
        (
            "a self-\nevident truth, self-evident to all",
            "a self-evident truth, self-evident to all",
        ),
        ("ends with a dash -\nnext line", "ends with a dash -\nnext line"),
        ("specify arti-\n\ncles across columns", "specify articles across columns"),
        ("a list:\n-\n\nitem", "a list:\n-\n\nitem"),
        ("Keywords: pre-\n\nPost scriptum", "Keywords: pre-\n\nPost scriptum"),
    ],
)
def test_hyphenated_line_breaks(raw: str, expected: str) -> None:
    assert clean_page_text(raw) == expected


def test_ligatures_are_spelled_out() -> None:
    text = clean_page_text("ﬁnd the ﬂow, eﬃcient, baﬄe, oﬀer, ﬅop, ﬆar")
    assert text == "find the flow, efficient, baffle, offer, stop, star"


def test_presentation_forms_and_spaces_are_normalised() -> None:
    # Full-width Latin, odd spaces and Arabic presentation forms map to plain letters.
    assert clean_page_text("ＡＢＣ１２３\u00a0x\u2009y\u3000z ｶﾀｶﾅ") == "ABC123 x y z カタカナ"
    assert clean_page_text("\ufefb \ufe8d\ufedf\ufee0\ufeea") == "لا الله"


def test_meaningful_compatibility_characters_survive() -> None:
    # Blanket NFKC would turn these into x2, CO2, 1⁄2 and four CJK characters.
    text = "x² CO₂ ½ ㍿ ™"
    assert clean_page_text(text) == text


def test_arabic_and_cjk_text_is_untouched() -> None:
    arabic = "من أين تأتي الحياة؟ حسنًا! إن أردنا أن نفهم"
    cjk = "中文测试，日本語のテキスト。한국어 텍스트"
    persian = "می\u200cخواهم"  # ZWNJ is part of the spelling
    assert clean_page_text(arabic) == arabic
    assert clean_page_text(cjk) == cjk
    assert clean_page_text(persian) == persian


def test_control_characters_go_but_tabs_and_newlines_stay() -> None:
    raw = "\ufeffa\x00b\x07c\td\r\ne\x0cf soft\u00adhyphen zero\u200bwidth"
    assert clean_page_text(raw) == "abc d\ne\nf softhyphen zerowidth"


def test_whitespace_collapses_and_paragraphs_keep_one_blank_line() -> None:
    raw = "  first   line  \nsecond\t\tline\n\n\n\n   \nnext paragraph   "
    assert clean_page_text(raw) == "  first line\nsecond line\n\nnext paragraph"


@pytest.mark.parametrize("line", ["12", "- 12 -", "Page 12", "page 3 of 18", "12 / 18", " 7 "])
def test_bare_page_numbers_are_dropped(line: str) -> None:
    assert clean_page_text(f"body text\n{line}\nmore text") == "body text\nmore text"


def test_page_numbers_can_be_kept() -> None:
    assert clean_page_text("answer:\n42", drop_page_numbers=False) == "answer:\n42"
    # A number with more context is content.
    assert (
        clean_page_text("in 1998 it passed\n2. Second item") == "in 1998 it passed\n2. Second item"
    )


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def _pages(n: int) -> list[str]:
    return [
        f"The Book of Tests\n{w} opens here.\n{w} middle\n{w} closes.\nPage {i}"
        for i, w in enumerate(WORDS[:n], start=1)
    ]


def test_running_headers_and_footers_are_removed() -> None:
    out = strip_running_headers(_pages(6))
    assert all("The Book of Tests" not in page for page in out)
    assert all("Page " not in page for page in out)
    assert out[0] == "alpha opens here.\nalpha middle\nalpha closes."


def test_running_headers_need_four_pages_and_half_of_them() -> None:
    assert strip_running_headers(_pages(3)) == _pages(3)
    pages = _pages(6)
    pages[3:] = [
        p.replace("The Book of Tests", f"Unique heading {i}") for i, p in enumerate(pages[3:])
    ]
    pages[2] = pages[2].replace("The Book of Tests", "Something else")
    out = strip_running_headers(pages)
    assert sum("The Book of Tests" in page for page in out) == 2  # 2 of 6: kept


def test_running_header_variants_from_ocr_are_removed() -> None:
    pages = [
        f"THE SIEGE OF VICKSBURG. {n}\n{w} body\n{w} end"
        for n, w in zip(range(50, 55), WORDS, strict=False)
    ]
    pages[2] = "THE SIEGE OF VICKSBUEG.\nodd body\nodd end"
    out = strip_running_headers(pages)
    assert all("SIEGE" not in page for page in out)
    assert out[2] == "odd body\nodd end"


def test_a_title_in_capitals_survives_its_running_header() -> None:
    pages = ["THE DIGITAL ACT OF 1998\nSummary\nintro text"] + [
        f"The Digital Act of 1998\nbody {i}\nmore" for i in range(2, 7)
    ]
    out = strip_running_headers(pages)
    assert out[0].startswith("THE DIGITAL ACT OF 1998")
    assert all("The Digital Act" not in page for page in out[1:])


def test_repeated_lines_in_the_middle_of_pages_stay() -> None:
    pages = [f"{w}\n{w} a\n{w} b\nsee figure\n{w} c\n{w} d\n{w} e" for w in WORDS[:6]]
    out = strip_running_headers(pages)
    assert all("see figure" in page for page in out)
