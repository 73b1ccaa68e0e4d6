"""Which writing system a text is written in, and the language that implies (for OCR).

Characters are counted per script. A script other than Latin decides when it has at least
``MIN_CHARS`` characters and a fifth of the letters (a Japanese paper with an English abstract
is Japanese: tesseract's Japanese model reads Latin letters, its English one reads no kana);
Latin decides only with ``MIN_LETTERS`` letters, and less than that is no evidence at all.
Japanese is Han with kana; Han alone is Chinese, simplified or traditional by the characters
that differ between the two (这/這, 们/們 …), "zh" when none of them occurs.

    text_language("吾輩は猫である。名前はまだ無い。")  # "ja"
    text_language("这是一本关于机器学习的书。")          # "zh-Hans"
    text_language("Figure 3")                          # None: too little to tell
    tag_language("zh-TW")                              # "zh-Hant"
"""

from __future__ import annotations

import re

MIN_CHARS = 5
MIN_LETTERS = 20
MIN_SHARE = 0.2
KANA_SHARE = 0.05  # Japanese prose is a third kana or more; Chinese has none

#: Languages written in Han characters (one script decides between them, see text_language).
HAN_LANGUAGES = ("ja", "zh-Hans", "zh-Hant", "zh")

_KANA = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HAN = "\u3005\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_SCRIPTS: dict[str, re.Pattern[str]] = {
    "kana": re.compile(f"[{_KANA}]"),
    "han": re.compile(f"[{_HAN}]"),
    "hangul": re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"),
    "arabic": re.compile("[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefc]"),
    "hebrew": re.compile("[\u0590-\u05ff]"),
    "cyrillic": re.compile("[\u0400-\u04ff]"),
    "greek": re.compile("[\u0370-\u03ff]"),
    "thai": re.compile("[\u0e00-\u0e7f]"),
    "devanagari": re.compile("[\u0900-\u097f]"),
    "latin": re.compile("[A-Za-z\u00c0-\u024f]"),
}
_SCRIPT_LANGUAGE = {
    "hangul": "ko",
    "arabic": "ar",
    "hebrew": "he",
    "cyrillic": "ru",
    "greek": "el",
    "thai": "th",
    "devanagari": "hi",
}
#: Characters only simplified Chinese uses, and their traditional forms at the same index.
_SIMPLIFIED = (
    "这们个来说时国会为学对发经过还实现点开关没问题样长书车门见从东边义应将专业产万与"
    "么动进种间当无机电气论变让认话语读写华汉区处头帮钱条历号计记设统级务总质线组结给"
)
_TRADITIONAL = (
    "這們個來說時國會為學對發經過還實現點開關沒問題樣長書車門見從東邊義應將專業產萬與"
    "麼動進種間當無機電氣論變讓認話語讀寫華漢區處頭幫錢條歷號計記設統級務總質線組結給"
)
_SIMPLIFIED_RE = re.compile(f"[{_SIMPLIFIED}]")
_TRADITIONAL_RE = re.compile(f"[{_TRADITIONAL}]")

#: Chinese and Japanese characters: written without spaces, a run of them holds many words.
CJK = re.compile(f"[{_KANA}{_HAN}]")
#: The same with CJK punctuation and full-width forms: no space belongs between two of them.
CJK_TEXT = re.compile(f"[{_KANA}{_HAN}\u3000-\u303f\ufe30-\ufe4f\uff00-\uffef]")
#: Characters set upright in vertical writing: CJK and Hangul, CJK punctuation and full-width
#: forms, and what a font without a Unicode mapping gives (private use, U+FFFD, ``(cid:N)``).
UPRIGHT = re.compile(
    f"[{_KANA}{_HAN}\u1100-\u11ff\u3000-\u303f\u3130-\u318f\uac00-\ud7af"
    "\ue000-\uf8ff\ufe30-\ufe4f\uff00-\uffef\ufffd]|\\(cid:\\d+\\)"
)


def script_counts(text: str) -> dict[str, int]:
    """How many characters of each script ``text`` holds (scripts with none are left out)."""
    counts = {name: len(pattern.findall(text)) for name, pattern in _SCRIPTS.items()}
    return {name: n for name, n in counts.items() if n}


def _han_language(text: str) -> str:
    simplified = len(_SIMPLIFIED_RE.findall(text))
    traditional = len(_TRADITIONAL_RE.findall(text))
    if simplified > traditional:
        return "zh-Hans"
    return "zh-Hant" if traditional > simplified else "zh"


def text_language(text: str) -> str | None:
    """The language ``text`` is evidence for: a tag such as "ja", "zh-Hans", "ko", "ar",
    "latin" for any Latin-script language, or None when there is too little text to tell."""
    counts = script_counts(text)
    letters = sum(counts.values())
    cjk = counts.get("han", 0) + counts.get("kana", 0)
    candidates = {name: n for name, n in counts.items() if name not in ("han", "kana", "latin")}
    candidates["cjk"] = cjk
    script, n = max(candidates.items(), key=lambda item: item[1])
    if n >= MIN_CHARS and n >= MIN_SHARE * letters:
        if script != "cjk":
            return _SCRIPT_LANGUAGE[script]
        return "ja" if counts.get("kana", 0) >= KANA_SHARE * cjk else _han_language(text)
    return "latin" if counts.get("latin", 0) >= MIN_LETTERS else None


def tag_language(tag: str) -> str | None:
    """A BCP 47 tag ("ja-JP", "zh-Hant-TW", "ar") as text_language would name it; None for
    tags that name no language."""
    parts = [p.lower() for p in re.split(r"[-_]", tag.strip()) if p]
    if not parts or not parts[0].isalpha():
        return None
    lang, rest = parts[0], parts[1:]
    if lang == "zh":
        if "hant" in rest or {"tw", "hk", "mo"} & set(rest):
            return "zh-Hant"
        return "zh-Hans"
    if lang in ("ja", "ko", "ar", "he", "ru", "el", "th", "hi"):
        return lang
    return "latin" if lang in _LATIN_LANGUAGES else None


# ISO 639-1 codes of widespread languages written in the Latin script.
_LATIN_LANGUAGES = frozenset(
    "af ca cs cy da de en eo es et eu fi fr ga gl hr hu id is it lt lv ms mt nl no pl pt ro sk "
    "sl sq sv sw tl tr vi".split()
)
