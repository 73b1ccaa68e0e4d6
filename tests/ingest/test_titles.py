"""The first-line title fallback of PDFs without a Title: words yes, OCR noise no."""

from __future__ import annotations

import pytest

from quire.formats.extract import reads_like_a_title


@pytest.mark.parametrize(
    "line",
    [
        "The Digital Millennium Copyright Act of 1998",
        "Section 512(c): Notice & Takedown",
        "U.S. COPYRIGHT OFFICE SUMMARY",
        "Chapter 3 — The Spouter-Inn",
        "Faktura VAT nr 12/2024",
    ],
)
def test_titles(line: str) -> None:
    assert reads_like_a_title(line)


@pytest.mark.parametrize(
    "line", ["GRUMMAN .:.:.S20G 25) Ata Ttsts", "~~ ## ||| 12", "4f3a 9b2c 11e0 77d1 0x", "| | | |"]
)
def test_noise(line: str) -> None:
    assert not reads_like_a_title(line)
