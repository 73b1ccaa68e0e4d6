"""Lenient parsing of small-model replies: facts, selections, verdicts, citations."""

from __future__ import annotations

import pytest

from quire.synthesis.parse import (
    cited_numbers,
    clean_citations,
    escape_citations,
    loads_lenient,
    parse_facts,
    parse_selection,
    parse_verdict,
    unescape_citations,
)


@pytest.mark.parametrize(
    "raw",
    [
        '{"facts": []}',
        'Sure! Here you go:\n```json\n{"facts": []}\n```\nHope it helps.',
        'Result: {"facts": []} (done)',
    ],
)
def test_json_is_found_in_fences_and_prose(raw: str) -> None:
    assert loads_lenient(raw) == {"facts": []}


def test_no_json_gives_none() -> None:
    assert loads_lenient("I cannot help with that.") is None
    assert loads_lenient("{broken: json") is None


def test_facts_coerce_node_ids_and_skip_malformed_entries() -> None:
    raw = """{"facts": [
        {"node_id": "3", "fact": "The tide rises twice a day."},
        {"node_id": 1},
        {"node_id": "[2]", "fact": "  Moon   drives tides. "},
        {"node_id": 42, "fact": "out of range"},
        {"node_id": true, "fact": "a boolean is not an id"},
        "a string entry",
        {"node_id": 3, "fact": "a second fact for passage 3 is dropped"},
        {"id": "Source 4", "fact": "id is accepted as node_id"}
    ]}"""
    facts = parse_facts(raw, count=10)
    assert [(f.node_id, f.fact) for f in facts] == [
        (3, "The tide rises twice a day."),
        (2, "Moon drives tides."),
        (4, "id is accepted as node_id"),
    ]


def test_facts_from_a_bare_list_and_from_junk() -> None:
    assert [f.node_id for f in parse_facts('[{"node_id": 1, "fact": "abc def"}]', 2)] == [1]
    assert parse_facts("no idea", 5) == []
    assert parse_facts('{"facts": "none"}', 5) == []


def test_selection() -> None:
    assert parse_selection('{"relevant": [3, "1", 3, 99, "x"]}', 5) == [3, 1]
    assert parse_selection("[2]", 5) == [2]
    assert parse_selection('{"relevant": []}', 5) == []
    assert parse_selection("all of them", 5) is None


def test_verdicts() -> None:
    v = parse_verdict('{"status": "Missed_Info", "suggestion": "tide  tables 1990"}')
    assert v is not None and v.status == "missed-info" and v.suggestion == "tide tables 1990"
    ok = parse_verdict('```json\n{"status": "ok"}\n```')
    assert ok is not None and ok.status == "ok" and ok.suggestion is None
    assert parse_verdict('{"status": "maybe"}') is None
    assert parse_verdict("looks fine") is None


def test_citations_are_parsed_and_invented_ones_removed() -> None:
    answer = "Tides rise [1]. The moon [2, 7] pulls [3][1]. Nothing [9]."
    assert cited_numbers(answer) == [1, 2, 7, 3, 9]
    cleaned, cited = clean_citations(answer, valid=3)
    assert cleaned == "Tides rise [1]. The moon [2] pulls [3][1]. Nothing."
    assert cited == [1, 2, 3]
    assert clean_citations("no citations", 3) == ("no citations", [])


def test_a_quotes_own_bracketed_numbers_are_no_citations() -> None:
    # The yellow paper's REVERT row quoted: "µs[0]" is no citation of a source 0 to remove,
    # nor "µs[1]" one of source 1, nor a Perplexity thread's own "[2]" one of source 2.
    row = "HRETURN(µ) ≡ µm[µs[0] . . . (µs[0] + µs[1] − 1)], as the thread said [2]."
    quoted = escape_citations(row)
    assert (
        quoted
        == "HRETURN(µ) ≡ µm[µs\\[0] . . . (µs\\[0] + µs\\[1] − 1)], as the thread said \\[2]."
    )
    answer = f"- “{quoted}” [3]\n"
    assert cited_numbers(answer) == [3]
    assert clean_citations(answer, valid=3) == (answer, [3])
    # Read in a terminal, the quote is as written; a real citation keeps its brackets, and a
    # backslash that escapes no citation mark stays.
    assert unescape_citations(answer) == f"- “{row}” [3]\n"
    assert unescape_citations("a \\n b\\[x]") == "a \\n b\\[x]"
