"""Spreadsheets (formats/office/sheets.py): on the real workbooks of
../shared/data/docs/office, a row found by a value in it and quoted with its header, cached
formula values, sheets cut into row ranges cited "sheet X, rows a–b"; a workbook built here
for hidden sheets and values as shown, an OpenDocument one, and 100,000 rows in bounded
memory."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook

from quire.config import Settings
from quire.formats.extract import extract_file
from quire.formats.office.sheets import ROWS_PER_PAGE, extract_xlsx
from quire.storage.records import place
from tests.conftest import DOCS

OFFICE = DOCS / "office"
LIMIT = 500 << 20


def test_a_row_is_quoted_with_its_header() -> None:
    ex = extract_xlsx(
        OFFICE / "xlsx" / "onlyoffice-sample-olympic-medals.xlsx", max_unpacked_bytes=LIMIT
    )
    [page] = ex.pages
    assert page.label == "sheet Sheet1, rows 2–28" and page.heading_path == "Sheet1"
    assert "Rank: 3 · Country: China · Gold: 26 · Silver: 18 · Bronze: 26 · Total: 70" in page.text


def test_header_rows_stacked_and_percentages_as_shown() -> None:
    ex = extract_xlsx(
        OFFICE / "xlsx" / "chicago-gsb-employment-2006.xlsx", max_unpacked_bytes=LIMIT
    )
    assert [p.heading_path for p in ex.pages][:2] == ["Profile of Class", "Hires by Function"]
    row = (
        "Employment Profile: Seeking Employment · Percent of Class: 93.8% · Number of Students: 532"
    )
    # The title over the table is a line of its own, not part of the first column's name.
    assert row in ex.pages[0].text.split("\n")


def test_a_long_sheet_is_cut_into_row_ranges_and_formulas_read_as_cached() -> None:
    ex = extract_xlsx(
        OFFICE / "xlsx" / "georgia-child-support-calculator.xlsx", max_unpacked_bytes=LIMIT
    )
    bcso = [p for p in ex.pages if p.heading_path == "BCSO"]
    assert len(bcso) >= 3 and all(len(p.text.split("\n")) <= ROWS_PER_PAGE for p in bcso)
    first, last = bcso[0].meta["rows"]
    assert bcso[0].label == f"sheet BCSO, rows {first}–{last}"
    assert place("xlsx", bcso[0].number, bcso[0].label) == bcso[0].label
    assert bcso[1].meta["rows"][0] > last
    [income] = [p for p in bcso if p.meta["rows"][0] <= 94 <= p.meta["rows"][1]]
    [row] = [line for line in income.text.split("\n") if line.startswith("COMBINED")
             and ": 5000 · " in line]  # fmt: skip
    assert (
        row.startswith("COMBINED ADJUSTED GROSS INCOME: 5000 · ") and "THREE CHILDREN: 1500" in row
    )
    # ="Today's date: " & TEXT(TODAY(), ...): the value Excel cached when it saved.
    assert any("Today's date: 12/30/2016" in p.text for p in ex.pages)


def test_hidden_sheets_dates_and_booleans_of_a_workbook_built_here(tmp_path: Path) -> None:
    wb = Workbook()
    ws = wb.active
    ws.title = "Results"
    ws.append(["Country", "Year", "Yield", "Share", "Irrigated"])
    ws.append(["Peru", dt.date(2019, 5, 1), 3.2, 0.25, True])
    ws["D2"].number_format = "0.0%"
    secret = wb.create_sheet("Lookup")
    secret.append(["code", "meaning"])
    secret.append(["PE", 1.0])
    secret.sheet_state = "hidden"
    path = tmp_path / "yields.xlsx"
    wb.save(path)
    ex = extract_file(path, Settings(data_dir=tmp_path / "data"))
    assert ex.kind == "xlsx" and ex.metadata["hidden_sheets"] == ["Lookup"]
    results, lookup = ex.pages
    assert results.text.endswith(
        "Country: Peru · Year: 2019-05-01 · Yield: 3.2 · Share: 25.0% · Irrigated: TRUE"
    )
    assert (
        lookup.label == "sheet Lookup (hidden), rows 1–2" and "code: PE · meaning: 1" in lookup.text
    )


ODS_CONTENT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0">
<office:automatic-styles><style:style style:name="ta2" style:family="table">
<style:table-properties table:display="false"/></style:style></office:automatic-styles>
<office:body><office:spreadsheet>
<table:table table:name="Yields">
<table:table-row><table:table-cell office:value-type="string"><text:p>Country</text:p>
</table:table-cell>
<table:table-cell office:value-type="string"><text:p>Yield</text:p></table:table-cell>
<table:table-cell table:number-columns-repeated="16000"/></table:table-row>
<table:table-row><table:table-cell office:value-type="string"><text:p>Peru</text:p>
</table:table-cell><table:table-cell office:value-type="float" office:value="3.2">
<text:p>3.20</text:p></table:table-cell>
</table:table-row>
<table:table-row table:number-rows-repeated="1048570"><table:table-cell/></table:table-row>
</table:table>
<table:table table:name="Notes" table:style-name="ta2"><table:table-row>
<table:table-cell office:value-type="percentage" office:value="0.5"><text:p>50%</text:p>
</table:table-cell>
</table:table-row></table:table>
</office:spreadsheet></office:body></office:document-content>"""


def test_an_opendocument_spreadsheet(tmp_path: Path) -> None:
    path = tmp_path / "yields.ods"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("content.xml", ODS_CONTENT)
    ex = extract_file(path, Settings(data_dir=tmp_path / "data"))
    assert ex.kind == "ods"
    yields, notes = ex.pages
    assert yields.text == "Country · Yield\nCountry: Peru · Yield: 3.2"
    assert yields.label == "sheet Yields, rows 1–2"  # a million empty rows add nothing
    assert notes.label == "sheet Notes (hidden), row 1" and notes.text == "50%"


# Run in a child process, whose peak resident memory is its own: with ``read`` it extracts
# the workbook and reports what it found; without, it only imports what the reader needs.
_PEAK = """
import json, sys, time
from quire.formats.office.sheets import extract_xlsx
out = {}
if len(sys.argv) > 1:
    t0 = time.process_time()
    ex = extract_xlsx(sys.argv[1], max_unpacked_bytes=int(sys.argv[2]))
    out = {"pages": len(ex.pages), "last_rows": ex.pages[-1].meta["rows"],
           "last_text": ex.pages[-1].text, "text": sum(len(p.text) for p in ex.pages),
           "cpu_s": time.process_time() - t0}
# VmHWM, not ru_maxrss: that one keeps the parent's peak across exec.
status = open("/proc/self/status").read()
out["peak_kb"] = int(status.split("VmHWM:")[1].split()[0])
print(json.dumps(out))
"""


def _peak(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.slow  # ~10 s: the workbook is written, then read in a child process
def test_a_hundred_thousand_rows_in_bounded_memory(tmp_path: Path) -> None:
    rows = 100_000
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Readings")
    ws.append(["Station", "Day", "Reading", "Note"])
    for i in range(rows):
        ws.append([f"S{i % 97}", i, i * 0.5, "ok"])
    path = tmp_path / "big.xlsx"
    wb.save(path)
    base = _peak()
    read = _peak(str(path), str(LIMIT))
    assert read["pages"] == -(-(rows + 1) // ROWS_PER_PAGE)
    assert read["last_rows"][1] == rows + 1
    assert "Station: S89 · Day: 99999 · Reading: 49999.5 · Note: ok" in read["last_text"]
    # Resident memory beyond the same process without the workbook: the pages' own text (5 MB
    # of str) and little more (16 MB measured). openpyxl's full mode holds every cell as an
    # object, several hundred MB for this sheet.
    grown = (read["peak_kb"] - base["peak_kb"]) << 10
    print(f"grew {grown >> 20} MB for {read['text'] >> 20} MB of text in {read['cpu_s']:.1f} s")
    assert grown < 2 * read["text"] + (16 << 20), (grown, read["text"])
    assert read["cpu_s"] < 120  # CPU time: a busy machine does not slow it
