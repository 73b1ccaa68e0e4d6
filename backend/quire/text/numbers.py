"""Numbers as people write them, in figures and in words, for comparing one text's numbers
with another's: an answer that writes "14" is held by a source that says "fourteen", "1,200"
is 1200, and "How many nests?" is answered by "I opened fourteen nests"."""

from __future__ import annotations

import re
from collections.abc import Iterable

NUMBER_WORDS = dict(
    pair.split("=")
    for pair in """zero=0 one=1 two=2 three=3 four=4 five=5 six=6 seven=7 eight=8 nine=9 ten=10
    eleven=11 twelve=12 thirteen=13 fourteen=14 fifteen=15 sixteen=16 seventeen=17 eighteen=18
    nineteen=19 twenty=20 thirty=30 forty=40 fifty=50 sixty=60 seventy=70 eighty=80 ninety=90
    hundred=100 thousand=1000 million=1000000 dozen=12 once=1 twice=2 first=1 second=2
    third=3""".split()
)
#: Counts in the other languages questions are asked in (synthesis/asks.py), two and up: not
#: the words English uses otherwise ("cent" of "per cent", "seize", "sept", Spanish "once",
#: German "elf", Italian "due", Spanish "dos" of MS-DOS).
NUMBER_WORDS.update(
    dict(
        pair.split("=")
        for pair in """deux=2 trois=3 quatre=4 cinq=5 huit=8 neuf=9 dix=10 onze=11 douze=12
    treize=13 quatorze=14 quinze=15 vingt=20 trente=30 quarante=40 cinquante=50 soixante=60
    mille=1000 tres=3 cuatro=4 cinco=5 seis=6 siete=7 ocho=8 nueve=9 diez=10 doce=12
    trece=13 catorce=14 quince=15 veinte=20 treinta=30 cuarenta=40 cincuenta=50 cien=100
    dois=2 duas=2 três=3 quatro=4 sete=7 oito=8 dez=10 vinte=20 zwei=2 drei=3 vier=4 fünf=5
    sechs=6 sieben=7 acht=8 neun=9 zehn=10 zwölf=12 zwanzig=20 hundert=100 tausend=1000
    twee=2 drie=3 vijf=5 zes=6 zeven=7 negen=9 tien=10 twaalf=12 twintig=20 honderd=100
    duizend=1000 два=2 две=2 три=3 четыре=4 пять=5 шесть=6 семь=7 восемь=8 девять=9
    десять=10 пятнадцать=15 двадцать=20 сто=100 тысяча=1000""".split()
    )
)
#: The spelled numbers that count as a number said ("one", "first" or "second" are too often
#: no count: "one of the rows", "a second look").
COUNT_WORDS = frozenset(NUMBER_WORDS) - {"zero", "one", "once", "first", "second"}
_WORD = re.compile(r"[^\W\d_]+")
# A number standing alone (not the 0 of PUSH0 or the 32 of ILP32E): decimal, with thousands
# or decimal separators, a time (8:35), or hexadecimal.
_FIGURE = re.compile(r"(?<![\w.])(0x[0-9a-fA-F]+|\d[\d,.:]*\d|\d)(?![\w])")
_LEADING_ZEROS = re.compile(r"^0+(?=\d)")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


# A power: "10^15", "10**15", "10¹⁵". A PDF's text layer sets the exponent as a superscript
# that extraction flattens into the line: the page says "1015".
_POWER = re.compile(r"(?<![\w.])(\d+)\s*(?:\^|\*\*)\s*(\d+)(?![\w])|(\d+)([⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def figures(text: str) -> set[str]:
    """The numbers ``text`` writes in figures, normalised: "1,200" and "1200" are one, "3,5"
    is 3.5, "007" is 7; a power also as its text layer flattens it ("10^15": "1015")."""
    out = {
        (m[1] + m[2]) if m[1] else (m[3] + m[4].translate(_SUPERSCRIPTS))
        for m in _POWER.finditer(text)
    }
    if out:  # its base and exponent are no numbers of their own
        text = _POWER.sub(" ", text)
    for raw in _FIGURE.findall(text):
        if _THOUSANDS.fullmatch(raw):
            raw = raw.replace(",", "")
        elif "," in raw and "." not in raw:
            raw = raw.replace(",", ".")
        out.add(_LEADING_ZEROS.sub("", raw))
    return out


def spelled(words: Iterable[str]) -> set[str]:
    """The numbers, in figures, of those of ``words`` (lower case) that are number words."""
    return {NUMBER_WORDS[w] for w in words if w in NUMBER_WORDS}


def counts_in(text: str) -> set[str]:
    """The numbers ``text`` says in words that count (``COUNT_WORDS``), in figures."""
    return spelled(w for w in _WORD.findall(text.lower()) if w in COUNT_WORDS)
