"""Word and OpenDocument text (formats/office/word.py, odf.py, flow.py): on the real files of
../shared/data/docs/office, a fact cited by Word's rendered page or by heading path, tables as
rows with their header, notes where they are referred to, tracked changes as the document
reads, headers kept out; and the parts of a document built here (text boxes, comments,
lists, bold headings)."""

from __future__ import annotations

import re
from pathlib import Path

from quire.config import Settings
from quire.formats.extract import extract_file
from quire.formats.office.odf import extract_odt
from quire.formats.office.word import extract_word
from quire.storage.records import Page, place
from tests.conftest import DOCS
from tests.ingest.office_files import docx_bytes, p, write

OFFICE = DOCS / "office"
LIMIT = 500 << 20


def holding(pages: list[Page], text: str) -> list[Page]:
    return [page for page in pages if text in " ".join(page.text.split())]


def test_a_report_is_cut_into_the_pages_word_laid_out() -> None:
    ex = extract_word(
        OFFICE / "docx" / "halfmoonbay-adu-code-ch18-33.docx", max_unpacked_bytes=LIMIT
    )
    assert ex.metadata["pagination"] == "rendered"
    assert len(ex.pages) == ex.metadata["recorded_pages"] == 15
    [page] = holding(ex.pages, "less than 750 square feet")
    assert page.number == 12 and place("docx", page.number, page.label) == "p. 12"
    assert [p.number for p in holding(ex.pages, "no more than 500 square feet")] == [14]
    # The section that starts part-way down the page is where its chunks say they are.
    assert any("18.33.080 Impact Fees." in path for _, path in page.meta["headings"])


def test_tracked_changes_read_as_the_document_now_reads() -> None:
    ex = extract_word(
        OFFICE / "docx" / "halfmoonbay-adu-code-ch18-33.docx", max_unpacked_bytes=LIMIT
    )
    text = " ".join(" ".join(page.text for page in ex.pages).split())
    assert "within sixty days of receipt of a complete application" in text  # inserted
    assert "one hundred and twenty" not in text  # deleted


def test_headers_and_footers_stay_out_of_the_body() -> None:
    ex = extract_word(
        OFFICE / "docx" / "halfmoonbay-adu-code-ch18-33.docx", max_unpacked_bytes=LIMIT
    )
    assert "ATTACHMENT 2 EXHIBIT A" in ex.metadata["running_heads"]
    assert not holding(ex.pages, "ATTACHMENT 2 EXHIBIT A")


def test_a_table_row_spread_over_pages_keeps_its_page() -> None:
    ex = extract_word(
        OFFICE / "docx" / "chernigovka-library-calendar-2017-ru.docx", max_unpacked_bytes=LIMIT
    )
    assert ex.metadata["pagination"] == "rendered" and len(ex.pages) == 15
    assert [p.number for p in holding(ex.pages, "«Красный Октябрь» (1867)")] == [13]


def test_without_trusted_page_breaks_a_fact_is_cited_by_its_heading_path() -> None:
    ex = extract_word(OFFICE / "docx" / "pcb-nhl-seer-compilation.docx", max_unpacked_bytes=LIMIT)
    # 50 rendered pages where Word counted 52: the breaks are not trusted.
    assert ex.metadata["pagination"] == "sections"
    [page] = holding(ex.pages, "1.43 (95% CI 1.31–1.55)")
    assert page.heading_path.endswith(
        "3. Results > 3.1. Assessment of the Hill Criteria for Causation > "
        "3.1.3. Strength of Association (Causal Contribution) via Meta-Analysis"
    )
    assert re.fullmatch(r"3\.1\.3\. Strength .*Meta-Analysis, ¶ \d+–\d+", page.label or "")
    assert place("docx", page.number, page.label) == page.label


def test_a_table_row_carries_its_header_under_a_caption() -> None:
    ex = extract_word(OFFICE / "docx" / "pcb-nhl-seer-compilation.docx", max_unpacked_bytes=LIMIT)
    row = "Year: 1999 · New Cases - SEER 9: 141.5 · New Cases - SEER 13: 138.5 · Deaths - US: 26.6"
    assert holding(ex.pages, row)


def test_footnotes_are_read_where_they_are_referred_to() -> None:
    ex = extract_word(
        OFFICE / "docx" / "chile-cndu-land-policy-2014-es.docx", max_unpacked_bytes=LIMIT
    )
    [page] = holding(ex.pages, "objetivos nacionales[1].")
    assert "[1] Política Nacional de Desarrollo Urbano" in page.text
    # Notes come after the unit's body.
    assert page.text.index("[1] Política") > page.text.index("objetivos nacionales[1].")


def test_bold_lines_are_headings_when_no_style_says_so() -> None:
    ex = extract_word(
        OFFICE / "docx" / "va-chaplain-announcement-2008.docx", max_unpacked_bytes=LIMIT
    )
    [page] = holding(ex.pages, "at least 2 units of Clinical Pastoral Education")
    assert page.heading_path.endswith("Qualifications:")


def test_opendocument_text_by_its_soft_page_breaks() -> None:
    ex = extract_odt(OFFICE / "odt" / "odfpy-api-manual.odt", max_unpacked_bytes=LIMIT)
    assert ex.metadata["pagination"] == "rendered" and len(ex.pages) == 104
    [page] = holding(ex.pages, "teletype.addTextToElement")
    assert page.number == 100
    assert any(
        path == "Convenience modules > Teletype module" for _, path in page.meta["headings"]
    ) or (page.heading_path == "Convenience modules > Teletype module")


def test_opendocument_text_whose_breaks_miss_pages_is_read_by_section() -> None:
    ex = extract_odt(OFFICE / "odt" / "ooo-compound-document-format.odt", max_unpacked_bytes=LIMIT)
    assert ex.metadata["pagination"] == "sections"
    [page] = holding(ex.pages, "minimum value is 7 which means 128 bytes")
    assert page.heading_path.endswith(
        "Compound Document Header > Compound Document Header Contents"
    )


FOOTNOTES = (
    '<w:footnotes W_NS><w:footnote w:id="1"><w:p><w:r><w:t>A note on sources.</w:t></w:r></w:p>'
    "</w:footnote></w:footnotes>"
)
COMMENTS = (
    '<w:comments W_NS><w:comment w:id="0" w:author="Ada"><w:p><w:r><w:t>Check this figure.'
    "</w:t></w:r></w:p></w:comment></w:comments>"
)
HEADER = "<w:hdr W_NS><w:p><w:r><w:t>CONFIDENTIAL DRAFT</w:t></w:r></w:p></w:hdr>"
NUMBERING = (
    '<w:numbering W_NS><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/>'
    '<w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl><w:lvl w:ilvl="1">'
    '<w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%2)"/></w:lvl>'
    '</w:abstractNum><w:num w:numId="7"><w:abstractNumId w:val="0"/></w:num></w:numbering>'
)
STYLES = (
    '<w:styles W_NS><w:style w:type="paragraph" w:styleId="H1"><w:name w:val="heading 1"/>'
    '</w:style><w:style w:type="paragraph" w:styleId="H2"><w:name w:val="heading 2"/>'
    "</w:style></w:styles>"
)


def item(text: str, level: int) -> str:
    return (
        f'<w:p><w:pPr><w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="7"/></w:numPr></w:pPr>'
        f"<w:r><w:t>{text}</w:t></w:r></w:p>"
    )


def test_the_parts_of_a_document_built_here(tmp_path: Path) -> None:
    box = (
        '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx>'
        "<w:txbxContent><w:p><w:r><w:t>Boxed aside</w:t></w:r></w:p></w:txbxContent>"
        "</wps:txbx></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent><w:p><w:r>"
        "<w:t>Boxed aside</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback>"
        "</mc:AlternateContent></w:r>"
    )
    body = "".join(
        [
            p("Methods", style="H1"),
            p("Sampling", style="H2"),
            '<w:p><w:r><w:t xml:space="preserve">We sampled </w:t></w:r><w:ins w:id="1"><w:r>'
            '<w:t xml:space="preserve">forty </w:t></w:r></w:ins><w:del w:id="2"><w:r>'
            "<w:delText>thirty </w:delText></w:r></w:del><w:r><w:t>wells</w:t></w:r>"
            '<w:r><w:footnoteReference w:id="1"/></w:r><w:r><w:commentReference w:id="0"/></w:r>'
            "<w:r><w:rPr><w:vanish/></w:rPr><w:t>hidden words</w:t></w:r></w:p>",
            p("Anchor paragraph", extra=box),
            item("First step", 0),
            item("Detail", 1),
            item("Second step", 0),
            p("Run-in Label", bold=True),
            p("Text under the bold label."),
            "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Site</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r>"
            "<w:t>Depth</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>North</w:t>"
            "</w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>12 m</w:t></w:r></w:p></w:tc></w:tr>"
            "<w:tr><w:tc><w:p><w:r><w:t>South</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r>"
            "<w:t>40 m</w:t></w:r></w:p></w:tc></w:tr></w:tbl>",
        ]
    )
    parts = {
        "footnotes": FOOTNOTES,
        "comments": COMMENTS,
        "header": HEADER,
        "numbering": NUMBERING,
        "styles": STYLES,
    }
    path = write(tmp_path, "report.docx", docx_bytes(body, parts=parts))
    ex = extract_file(path, Settings(data_dir=tmp_path / "data"))
    assert ex.kind == "docx" and ex.metadata["pagination"] == "sections"
    text = "\n\n".join(page.text for page in ex.pages)
    assert "We sampled forty wells[1]" in text and "thirty" not in text
    assert "hidden words" not in text
    assert "[1] A note on sources." in text
    assert "Comment (Ada): Check this figure." in text
    assert text.count("Boxed aside") == 1  # the VML fallback copy is not read again
    assert "1. First step\n\na) Detail\n\n2. Second step" in text
    assert "Site: North · Depth: 12 m\nSite: South · Depth: 40 m" in text
    assert "CONFIDENTIAL DRAFT" not in text
    assert ex.metadata["running_heads"] == ["CONFIDENTIAL DRAFT"]
    by_text = {page.text.split("\n")[0]: page for page in ex.pages}
    assert by_text["Methods"].heading_path == "Methods > Sampling"  # nothing between: nested
    assert by_text["Run-in Label"].heading_path == "Methods > Sampling > Run-in Label"
    assert by_text["Run-in Label"].label == "Run-in Label, ¶ 9–11"
