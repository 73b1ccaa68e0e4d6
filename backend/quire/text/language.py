"""The language of a document, told at ingest from a sample of its text, and what the library
holds against what the embedder covers.

The script decides first (quire.text.scripts: kana → "ja", Han → "zh-Hans"/"zh-Hant",
Hangul, Arabic, Cyrillic …). Text in the Latin script, and Cyrillic and Arabic script (each
shared by several languages), is told apart by py3langid (langid.py's naive Bayes over byte
n-grams, 97 languages, no network), among the languages written in that script.

    detect(["Le chat dort sur la table depuis ce matin, sans bouger."] * 3)   # "fr"
    detect(["吾輩は猫である。名前はまだ無い。"])                                  # "ja"
    detect(["Figure 3"])                                                       # None
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from quire.text.scripts import text_language

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

log = logging.getLogger(__name__)

#: Characters read from a document: enough to tell its language, cheap to classify (~15 ms).
SAMPLE_CHARS = 200_000
#: Pages the sample is spread over (evenly, from first to last).
SAMPLE_PAGES = 100

#: py3langid's labels by script, for text whose script alone does not decide.
_CYRILLIC = ("ru", "uk", "be", "bg", "sr", "mk", "kk", "ky", "mn", "tg", "tt", "ba")
_ARABIC = ("ar", "fa", "ur", "ps", "ug", "ku", "sdh", "ary", "arz")
#: Labels that are no Latin-script language (or no language: zxx).
_NOT_LATIN = frozenset(
    "am ar ary arz as ba be bg bn dz el fa grc gu gom hbo he hi hy ja ka kk km kn ko ky lo mk "
    "ml mn mr my ne or pa ps ru sa sdh si ta te tg th tt ug uk ur wuu yue zh zxx".split()
)
#: Dialect labels stored as their language.
_ALIASES = {"ary": "ar", "arz": "ar", "sdh": "ku", "uzs": "uz", "gug": "gn", "nn": "no"}

#: English names of the languages Quire tells apart (others are shown by their tag).
NAMES = {
    "af": "Afrikaans", "ar": "Arabic", "az": "Azerbaijani", "be": "Belarusian",
    "bg": "Bulgarian", "bn": "Bengali", "bs": "Bosnian", "ca": "Catalan", "cs": "Czech",
    "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek", "en": "English",
    "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque", "fa": "Persian",
    "fi": "Finnish", "fr": "French", "ga": "Irish", "gl": "Galician", "he": "Hebrew",
    "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian",
    "is": "Icelandic", "it": "Italian", "ja": "Japanese", "ka": "Georgian", "kk": "Kazakh",
    "ko": "Korean", "ku": "Kurdish", "ky": "Kyrgyz", "la": "Latin", "lb": "Luxembourgish",
    "lt": "Lithuanian", "lv": "Latvian", "mk": "Macedonian", "mn": "Mongolian", "ms": "Malay",
    "mt": "Maltese", "nl": "Dutch", "no": "Norwegian", "pl": "Polish", "ps": "Pashto",
    "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sl": "Slovenian",
    "sq": "Albanian", "sr": "Serbian", "sv": "Swedish", "sw": "Swahili", "ta": "Tamil",
    "tg": "Tajik", "th": "Thai", "tl": "Tagalog", "tr": "Turkish", "tt": "Tatar",
    "ug": "Uyghur", "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek", "vi": "Vietnamese",
    "zh": "Chinese", "zh-Hans": "Chinese (Simplified)", "zh-Hant": "Chinese (Traditional)",
}  # fmt: skip


def language_name(tag: str) -> str:
    """The English name of a stored tag ("ja" → "Japanese"); the tag itself when unknown."""
    return NAMES.get(tag) or NAMES.get(tag.split("-")[0]) or tag


@functools.cache
def _identifier() -> LanguageIdentifier:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE)


def sample(texts: Sequence[str], limit: int = SAMPLE_CHARS) -> str:
    """Up to ``limit`` characters of ``texts`` (pages), spread over at most ``SAMPLE_PAGES``
    of them from first to last."""
    pages = [t for t in texts if t.strip()]
    if sum(len(t) for t in pages) <= limit:
        return "\n".join(pages)
    if len(pages) > SAMPLE_PAGES:
        step = len(pages) / SAMPLE_PAGES
        pages = [pages[int(i * step)] for i in range(SAMPLE_PAGES)]
    each = limit // len(pages)
    return "\n".join(t[:each] for t in pages)


def _among(text: str, allowed: Callable[[str], bool]) -> str | None:
    """py3langid's likeliest language for ``text`` among the ``allowed`` labels."""
    for label, _score in _identifier().rank(text):
        if allowed(str(label)):
            return _ALIASES.get(str(label), str(label))
    return None


def detect(texts: Sequence[str]) -> str | None:
    """The language of a document's pages as a tag ("en", "fr", "ja", "zh-Hant", "ar" …), or
    None when the text is too short to tell."""
    text = sample(texts)
    script = text_language(text)
    if script is None:
        return None
    try:
        if script == "latin":
            return _among(text, lambda label: label not in _NOT_LATIN)
        if script == "ru":
            return _among(text, _CYRILLIC.__contains__) or script
        if script == "ar":
            return _among(text, _ARABIC.__contains__) or script
    except Exception as exc:  # noqa: BLE001 - a failed guess leaves the language unknown
        log.warning("language detection failed: %s", exc)
        return None if script == "latin" else script
    return script
