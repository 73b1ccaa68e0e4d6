"""The other ways a document may write a query's word. British and American spellings: a
question that says "favourite" finds the page that says "favorite" (and "colour" "color",
"organise" "organize", "centre" "center", "travelled" "traveled", "defence" "defense",
"catalogue" "catalog", and back). A constant's name without its namespace: a question about
``R_RISCV_CALL_PLT`` finds the table that lists ``CALL_PLT``.

    >>> spellings("favourite")
    ['favourite', 'favorite']
    >>> spellings("color")
    ['color', 'colour']
    >>> spellings("filled")
    ['filled']
    >>> spellings("r_riscv_call_plt")
    ['r_riscv_call_plt', 'riscv_call_plt', 'call_plt']

Rules on the word's ending, not a dictionary: a rule can make a word that does not exist
("detour" → "detor"), which matches nothing and costs one index lookup; the rules avoid the
short words where the other spelling is another word ("four"/"for", "filled"/"filed")."""

from __future__ import annotations

import re

_SUFFIX = r"(?P<suffix>s|ed|ing|er|ers|ite|ites|able|ably|ful|ism|ist|ists|less|hood)?"


def _our(word: str) -> str | None:
    """colour → color, favourite → favorite (3+ letters before "our": not four, hour, tour)."""
    m = re.fullmatch(r"(?P<stem>\w{3,})our" + _SUFFIX, word)
    return f"{m['stem']}or{m['suffix'] or ''}" if m else None


def _or(word: str) -> str | None:
    """color → colour, behavior → behaviour (3+ letters before "or"; not floor, door)."""
    m = re.fullmatch(r"(?P<stem>\w{3,})or" + _SUFFIX, word)
    if not m or m["stem"].endswith("o"):
        return None
    return f"{m['stem']}our{m['suffix'] or ''}"


def _ise(word: str) -> str | None:
    """organise ↔ organize, analyse ↔ analyze, with their endings (organisation, analysed)."""
    m = re.fullmatch(
        r"(?P<stem>\w{3,}[iy])(?P<z>[sz])(?P<rest>e|es|ed|ing|ation|ations|er|ers)", word
    )
    if not m:
        return None
    other = "z" if m["z"] == "s" else "s"
    return f"{m['stem']}{other}{m['rest']}"


def _tre(word: str) -> str | None:
    """centre ↔ center, fibre → fiber, metres → meters; "ter" → "tre" from 6 letters (not
    enter, outer; not "ber" → "bre": member, number, October)."""
    if m := re.fullmatch(r"(?P<stem>\w{2,}[tb])re(?P<s>s?)", word):
        return f"{m['stem']}er{m['s']}"
    if len(word) >= 6 and (m := re.fullmatch(r"(?P<stem>\w{2,}t)er(?P<s>s?)", word)):
        return f"{m['stem']}re{m['s']}"
    return None


def _ence(word: str) -> str | None:
    """defence ↔ defense, licence ↔ license, pretence ↔ pretense."""
    m = re.fullmatch(r"(?P<stem>\w{2,}[fct])en(?P<c>[cs])e(?P<s>s?)", word)
    if not m:
        return None
    other = "s" if m["c"] == "c" else "c"
    return f"{m['stem']}en{other}e{m['s']}"


def _ll(word: str) -> str | None:
    """travelled ↔ traveled, modelling ↔ modeling: a consonant, then e or a, then l."""
    m = re.fullmatch(r"(?P<stem>\w{2,}[^aeiou][ea])(?P<l>ll?)(?P<rest>ed|ing|er|ers)", word)
    if not m:
        return None
    return f"{m['stem']}{'l' if m['l'] == 'll' else 'll'}{m['rest']}"


def _ogue(word: str) -> str | None:
    """catalogue ↔ catalog, programme ↔ program."""
    for long, short in (("ogue", "og"), ("gramme", "gram")):
        for s in ("", "s"):
            if word.endswith(long + s) and len(word) - len(long + s) >= 3:
                return word[: -len(long + s)] + short + s
            if word.endswith(short + s) and len(word) - len(short + s) >= 3:
                return word[: -len(short + s)] + long + s
    return None


_RULES = (_our, _or, _ise, _tre, _ence, _ll, _ogue)


def namespace_tails(name: str) -> list[str]:
    """A constant's name without its leading parts, down to the last two: ``R_RISCV_CALL_PLT``
    → ``RISCV_CALL_PLT``, ``CALL_PLT``; none for a name of one or two parts."""
    parts = name.split("_")
    if len(parts) < 3 or not all(parts):
        return []
    return ["_".join(parts[i:]) for i in range(1, len(parts) - 1)]


def spellings(word: str) -> list[str]:
    """``word`` (lower case) and its other spellings, British or American, by rule; a
    constant's name also without its namespace (``r_riscv_call_plt``: ``call_plt``, as a
    specification's table lists it)."""
    out = [word]
    if "_" in word:
        return out + namespace_tails(word)
    if not word.isascii() or not word.isalpha() or len(word) < 5:
        return out
    for rule in _RULES:
        other = rule(word)
        if other and other not in out:
            out.append(other)
    return out
