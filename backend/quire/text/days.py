"""Days of a month as questions and texts write them: "1 May", "1st of May", "May 1st".

    days_named("Who left on the evening of 1 May?")      # [("1", 5)]
    day_pattern("1", 5).search("Left Munich on 1st May")  # a match; "1 October" is not one

A question's "1 May" is looked for as that day in any of its forms, not as the number 1
(synthesis/extractive.py): a diary dated "1 October" does not answer it.
"""

from __future__ import annotations

import re

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" + (
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?: of)? {_MONTH}(?!\w)"
    rf"|\b{_MONTH} (\d{{1,2}})(?:st|nd|rd|th)?\b",
    re.I,
)


def days_named(text: str) -> list[tuple[str, int]]:
    """The days of a month ``text`` names, as (day, month number): ("1", 5) for "the evening
    of 1 May"."""
    out = []
    for m in _DAY_MONTH.finditer(text):
        day, month = (m[1], m[2]) if m[1] else (m[4], m[3])
        number = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(month[:3].lower()))
        out.append((str(int(day)), number))
    return out


def day_pattern(day: str, month: int) -> re.Pattern[str]:
    """That day in any of its forms: "1 May", "1st May", "1st of May", "May 1", "May 1st"."""
    name = _MONTHS[month - 1]
    spelled = rf"(?:{name[:3]}{name[3:] and f'(?:{name[3:]})?'}\.?)"
    return re.compile(
        rf"(?<![\w.]){day}(?:st|nd|rd|th)?(?: of)? {spelled}(?!\w)"
        rf"|(?<!\w){spelled} {day}(?:st|nd|rd|th)?(?!\w)",
        re.I,
    )
