from __future__ import annotations

import re
from pathlib import Path

import pytest
from fpdf import FPDF
from fpdf.enums import EncryptionMethod
from pdfminer.layout import LTTextBoxHorizontal

from quire.config import Settings
from quire.errors import CorruptFile, EncryptedFile, ResourceLimit
from quire.formats.extract import extract_file
from quire.formats.pdf.layout import LAPARAMS
from quire.formats.pdf.text import count_words, ocr_reason, read_text_layer
from quire.formats.types import Extracted

# CI clones the repo next to shared/: always resolve it as <repo>/../shared.
DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"
PDFS = DOCS / "pdf"

LOREM = (
    "Quire keeps every page of a document so that an answer can cite the exact page it came "
    "from, and this sentence exists only to give the text layer enough real words. "
)


@pytest.fixture(scope="module")
def settings() -> Settings:
    return Settings(ocr_dpi=200)


@pytest.fixture(scope="module")
def naacl(settings: Settings) -> Extracted:
    return extract_file(PDFS / "naacl06-shinyama.pdf", settings)


def _text(extracted: Extracted) -> str:
    return "\n".join(p.text for p in extracted.pages)


def test_ligatures_expanded_in_a_type1_paper(naacl: Extracted) -> None:
    text = _text(naacl)
    assert not re.search("[\ufb00-\ufb06]", text)
    words = set(re.findall(r"\w+", text))
    for word in ("find", "first", "flew", "reflect", "specific", "significant", "officials"):
        assert word in words, word
    # ligature + hyphenated line break ("conﬁ-\ndence") in one word
    assert "confidence" in words


def test_two_column_paper_pages_and_title(naacl: Extracted) -> None:
    assert naacl.kind == "pdf"
    assert [p.number for p in naacl.pages] == list(range(1, 9))
    assert all(p.source == "text_layer" for p in naacl.pages)
    # No Title in the document info: the first line of page 1 stands in.
    assert naacl.title == "Preemptive Information Extraction using Unrestricted Relation Discovery"
    # Column order: the abstract, then section 1 whose left column runs on into the right one
    # ("arti-" at the foot of the column, "cles" at the top of the next).
    page1 = naacl.pages[0].text
    assert page1.index("We are trying to extend the boundary") < page1.index("1 Background")
    assert "specify articles and adjust its patterns" in page1


def test_dmca_has_18_numbered_pages_without_running_header(settings: Settings) -> None:
    doc = extract_file(PDFS / "dmca-summary.pdf", settings)
    assert [p.number for p in doc.pages] == list(range(1, 19))
    assert doc.title == "The Digital Millennium Copyright Act of 1998"
    assert doc.author == "United States Copyright Office - jmf"
    assert doc.metadata["page_count"] == 18 and doc.metadata["ocr_pages"] == []
    # The running header of pages 2–18 is gone; page 1 keeps its title in capitals.
    assert doc.pages[0].text.startswith("THE DIGITAL MILLENNIUM COPYRIGHT ACT OF 1998")
    assert all("The Digital Millennium Copyright Act of 1998" not in p.text for p in doc.pages[1:])
    assert doc.pages[1].text.startswith("TITLE I: WIPO TREATY IMPLEMENTATION")
    assert "Registration as a Prerequisite to Suit" in doc.pages[2].text
    # "Page 18" footer lines are gone too.
    assert not any(re.search(r"^Page \d+$", p.text, re.M) for p in doc.pages)


def test_polish_diacritics_via_identity_cmap(settings: Settings) -> None:
    doc = extract_file(PDFS / "polish-invoice-identity-cmap.pdf", settings)
    text = _text(doc)
    for word in ("Łódź", "Żwirki", "Spółka", "Książę", "żółw", "sprzedaży", "płatności"):
        assert word in text, word
    assert doc.title == "Faktura nr FV 1/2021"


def test_glyphs_mapped_to_no_character_are_not_shown_as_cid_codes(settings: Settings) -> None:
    # The NAACL paper's summation signs (a font without a Unicode map) came out "(cid:88)".
    doc = extract_file(PDFS / "naacl06-shinyama.pdf", settings)
    text = _text(doc)
    assert "(cid:" not in text and "\ufffd" in text
    assert "Vw(A) = IDF(w)" in text  # the text around them is kept


def test_hidden_ocr_layer_of_a_scan_is_kept(settings: Settings) -> None:
    doc = extract_file(PDFS / "vicksburg-scan-ocr.pdf", settings)
    assert [p.source for p in doc.pages] == ["text_layer"] * 6
    text = _text(doc)
    assert "Johnston is coming with fifty" in text and "Grant" in text
    # "Binder1.pdf" in Title is a placeholder; the running head makes a better title...
    assert doc.title == "THE SIEGE OF VICKSBURG."
    # ...and is stripped from the pages, OCR misspellings included.
    assert not re.search(r"SIEGE\s+O[FP]\s+VICKSBU", text)


def test_progress_is_reported_per_page() -> None:
    seen: list[float] = []
    read_text_layer(PDFS / "dmca-summary.pdf", max_pages=100, min_words=10, progress=seen.append)
    assert len(seen) == 18 and seen[-1] == 1.0 and seen == sorted(seen)


def test_too_many_pages(settings: Settings) -> None:
    with pytest.raises(ResourceLimit, match="18 pages; the limit is 5"):
        extract_file(PDFS / "dmca-summary.pdf", settings.model_copy(update={"max_pages": 5}))


def test_truncated_pdf_is_corrupt(tmp_path: Path, settings: Settings) -> None:
    for name in ("naacl06-shinyama.pdf", "dmca-summary.pdf", "vicksburg-scan-ocr.pdf"):
        data = (PDFS / name).read_bytes()
        half = tmp_path / name
        half.write_bytes(data[: len(data) // 2])
        with pytest.raises(CorruptFile, match="truncated") as err:
            extract_file(half, settings)
        assert "Damaged PDF" in err.value.message


def test_garbage_after_the_header_is_corrupt(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "junk.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"this is not a pdf body\n" * 50 + b"%%EOF\n")
    with pytest.raises(CorruptFile):
        extract_file(path, settings)


def _fpdf(*pages: str) -> FPDF:
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(w=0, text=text)
    return pdf


@pytest.mark.parametrize("method", [EncryptionMethod.RC4, EncryptionMethod.AES_256])
def test_password_protected_pdf(
    tmp_path: Path, settings: Settings, method: EncryptionMethod
) -> None:
    pdf = _fpdf(LOREM * 3)
    pdf.set_encryption(
        owner_password="owner-secret", user_password="user-secret", encryption_method=method
    )
    path = tmp_path / "locked.pdf"
    pdf.output(str(path))
    with pytest.raises(EncryptedFile, match="password-protected"):
        extract_file(path, settings)


def test_owner_password_only_pdf_is_readable(tmp_path: Path, settings: Settings) -> None:
    # Like dmca-summary.pdf: encrypted with an empty user password, so anyone may read it.
    pdf = _fpdf(LOREM * 3)
    pdf.set_encryption(owner_password="owner-secret")
    path = tmp_path / "restricted.pdf"
    pdf.output(str(path))
    doc = extract_file(path, settings)
    assert "cite the exact page" in doc.pages[0].text


def test_leading_junk_before_the_header_is_tolerated(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "junk-first.pdf"
    path.write_bytes(b"X-Mailer junk line\r\n" * 20 + bytes(_fpdf(LOREM * 2, LOREM).output()))
    doc = extract_file(path, settings)
    assert [p.number for p in doc.pages] == [1, 2]
    assert all("cite the exact page" in p.text for p in doc.pages)


def test_blank_page_is_not_sent_to_ocr(tmp_path: Path) -> None:
    path = tmp_path / "blank-middle.pdf"
    _fpdf(LOREM * 2, "", LOREM).output(str(path))
    layer = read_text_layer(path, max_pages=10, min_words=10)
    assert [p.ocr_reason for p in layer.pages] == [None, None, None]
    assert layer.pages[1].text == ""


def test_a_page_with_drawing_and_few_words_wants_ocr(tmp_path: Path) -> None:
    pdf = _fpdf(LOREM * 2)
    pdf.add_page()
    pdf.rect(20, 20, 100, 60)
    pdf.text(25, 30, "Figure 1")
    path = tmp_path / "figure.pdf"
    pdf.output(str(path))
    layer = read_text_layer(path, max_pages=10, min_words=10)
    assert [p.ocr_reason for p in layer.pages] == [None, "few_words"]


def test_ocr_reason_rules() -> None:
    good = "The quick brown fox jumps over the lazy dog again and again and again."
    assert ocr_reason(good, 10) is None
    assert ocr_reason("Figure 3: results", 10) == "few_words"
    assert ocr_reason("", 10) == "few_words"
    # pdfminer's placeholders for glyphs without a Unicode mapping
    cids = " ".join(f"(cid:{n})(cid:{n + 1})(cid:{n + 2})" for n in range(40))
    assert ocr_reason(cids, 10) == "few_words"  # no real words at all
    assert ocr_reason(good + " " + cids, 10) == "mojibake"
    assert ocr_reason(good + " \ue001\ue002\ue003\ue004\ue005\ue006\ue007\ue008", 10) == "mojibake"
    assert ocr_reason("%$#@ !&*^ ~|<> {}[] " * 10 + "a b c d e f g h i j k", 10) == "mojibake"
    # A page of figures and prices is not mojibake.
    assert ocr_reason("Razem 121,00 PLN 27,83 148,83 VAT 23% netto brutto " * 3, 10) is None
    # A stray (cid:N) in a formula does not condemn a page.
    assert ocr_reason(good * 5 + " (cid:80) ", 10) is None


def test_count_words_ignores_placeholders_and_punctuation() -> None:
    assert count_words("one two, three — (cid:12) ! 4") == 4


def _first_page(pdf: FPDF, path: Path, settings: Settings) -> str:
    """The text Quire reads on the first page of ``pdf``, written to ``path``."""
    pdf.output(str(path))
    return extract_file(path, settings).pages[0].text


def _reading_order(boxes: dict[str, LTTextBoxHorizontal]) -> list[str]:
    """The order pdfminer's layout analysis reads ``boxes`` in (grouped closest first, then
    each group sorted), given in their order on the page."""
    from pdfminer.layout import IndexAssigner, LTPage

    names = {id(box): name for name, box in boxes.items()}
    page = LTPage(1, (0, 0, 200, 200))
    assigner = IndexAssigner()
    for group in page.group_textboxes(LAPARAMS, list(boxes.values())):
        group.analyze(LAPARAMS)
        assigner.run(group)
    return [names[id(box)] for box in sorted(boxes.values(), key=lambda box: box.index)]


def test_text_boxes_tied_in_distance_are_read_in_the_same_order_in_every_run() -> None:
    """Four labels at the corners of a square (a chart's ticks) are as near the label beside
    them as the one below: pdfminer broke that tie by the boxes' memory addresses, so a page
    (Think Complexity's charts on pp. 164 and 200) came out in another order in another run.
    Boxes whose addresses run in the page's order, and boxes whose addresses put the
    lower-left before the upper-right, must read the same."""
    corners = {"TL": (0, 100), "TR": (50, 100), "BL": (0, 50), "BR": (50, 50)}
    orders = []
    for roles in (("TL", "TR", "BL", "BR"), ("TL", "BL", "TR", "BR")):
        made = sorted((LTTextBoxHorizontal() for _ in corners), key=id)
        boxes = dict(zip(roles, made, strict=True))
        for name, (x, y) in corners.items():
            boxes[name].set_bbox((x, y, x + 10, y + 10))
        orders.append(_reading_order({name: boxes[name] for name in corners}))
    assert orders[0] == orders[1] == ["TL", "TR", "BL", "BR"]


def test_text_turned_a_quarter_is_read_along_its_letters(
    tmp_path: Path, settings: Settings
) -> None:
    """An axis title set sideways ('Average speed' going up a chart's side) came out a letter
    per line, top to bottom ("d e e p s e g a r e v A" once a sentence ran into it). Turned
    left it reads upwards, turned right downwards, with its word gaps; a whole page of it
    (a landscape table printed sideways) reads line by line. Think Complexity's charts have
    such titles (p. 181, 'Average speed')."""
    pdf = _fpdf(LOREM * 2)
    pdf.set_font("helvetica", size=10)
    with pdf.rotation(90, x=30, y=200):
        pdf.text(30, 200, "Average speed")
    with pdf.rotation(-90, x=180, y=150):
        pdf.text(180, 150, "Mean fitness")
    pdf.add_page()
    rows = ("Model one scores high", "Model two scores low") + tuple(LOREM.split(", "))
    for i, row in enumerate(rows):
        with pdf.rotation(90, x=20 + 8 * i, y=280):
            pdf.text(20 + 8 * i, 280, row)
    path = tmp_path / "turned.pdf"
    pdf.output(str(path))
    first, second = (p.text for p in extract_file(path, settings).pages)
    assert "Average speed" in first
    assert "Mean fitness" in first
    assert "Model one scores high\n\nModel two scores low" in second
    assert not re.search(r"(?m)^\w\n\w\n\w$", first + second)


def test_lines_set_a_little_loose_are_one_paragraph(tmp_path: Path, settings: Settings) -> None:
    """The RISC-V ABI sets its lines 0.505 of their height apart, past pdfminer's line margin,
    so each line was a paragraph of its own and every sentence broke at a line's end ("Editors
    Kito Cheng and Jessica" / "Clarke, RISC-V International, November 2022."). A full line that
    ends no sentence goes on with the line below; a sentence's end, and a column of short
    labels (equation numbers) set as loose, stay apart."""
    pdf = _fpdf(LOREM * 2)
    loose = 6.1  # mm: Helvetica 11's lines 0.57 of their height apart
    for text in (
        "Please cite as: RISC-V ABIs Specification, Document Version 1.0, Editors Kito Cheng and "
        "Jessica Clarke, RISC-V International, November 2022. The latest version of this "
        "document can be found on the site of the foundation that keeps it.",
        "This paragraph starts after the one that ends a sentence.",
    ):
        pdf.set_x(20)
        pdf.multi_cell(w=150, h=loose, text=text, align="J", new_x="LMARGIN", new_y="NEXT")
    pdf.text(185, 200, "(104)")
    pdf.text(185, 200 + loose, "(105)")
    text = _first_page(pdf, tmp_path / "loose.pdf", settings)
    assert (
        "Editors Kito Cheng\nand Jessica Clarke, RISC-V International, November 2022. The latest"
        " version of this\ndocument can be found"
    ) in text
    assert "that keeps it.\n\nThis paragraph starts" in text
    assert "(104)\n\n(105)" in text


def test_a_hanging_indent_goes_on_with_its_paragraph(tmp_path: Path, settings: Settings) -> None:
    """A definition or a bullet whose second line is indented (the yellow paper's fields, "amount:
    a nonzero amount of Ether denominated" / "in Gwei (10^9 Wei); formally Wa.") was read as two
    paragraphs cut mid-sentence, since pdfminer puts in one box only lines aligned on a side. The
    indented line goes on with its paragraph; a line that ends a sentence, or a new item set
    flush, starts its own."""
    pdf = _fpdf(LOREM * 2)
    lines = [
        (20, "amount: a nonzero amount of Ether denominated in units that are quite small and"),
        (26, "in Gwei (10^9 Wei); formally Wa."),
        (20, "recipient: the twenty-byte address that will receive the Ether of the withdrawal"),
        (26, "and no other address; formally Wr."),
        (20, "The paragraph after the list ends its sentence here."),
        (26, "Indented, yet a paragraph of its own."),
    ]
    y = 120.0
    for x, line in lines:
        pdf.text(x, y, line)
        y += 4.6
    text = _first_page(pdf, tmp_path / "hanging.pdf", settings)
    assert (
        "amount: a nonzero amount of Ether denominated in units that are quite small and\n"
        "in Gwei (10^9 Wei); formally Wa."
    ) in text
    assert "receive the Ether of the withdrawal\nand no other address; formally Wr." in text
    assert "ends its sentence here.\n\nIndented, yet a paragraph of its own." in text
