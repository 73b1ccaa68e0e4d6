"""Which languages an embedder covers, told from its name (or the ``embed_languages`` setting).

An embedder trained on English alone puts a Japanese passage and a Japanese question at random
distances: the dense leg is noise for that language. Known models by name:

    coverage("local:all-MiniLM-L6-v2-int8")   # Coverage(languages={"en"}, known=True)
    coverage("ollama:bge-m3")                 # Coverage(languages=None, known=True): multilingual
    coverage("ollama:my-model")               # Coverage(languages=None, known=False)
    coverage("local:my-model", "en,ja")       # the setting decides (a model put in a folder)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from quire.text.language import language_name

#: Model names (after the ``local:``/``ollama:`` prefix and any ``namespace/``), checked in
#: order, each with the languages it covers (None: multilingual). The first match decides.
MODELS: tuple[tuple[re.Pattern[str], frozenset[str] | None], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), langs)
    for pattern, langs in (
        (r"bge-m3(:.*)?", None),
        (r"nomic-embed-text-v2.*", None),
        (r".*multilingual.*", None),  # multilingual-e5-*, paraphrase-multilingual-*, …
        (r"snowflake-arctic-embed2(:.*)?", None),
        (r"granite-embedding:278m.*", None),
        (r"jina-embeddings-v[34].*", None),
        (r"qwen3-embedding.*", None),
        (r"embeddinggemma.*", None),
        (r"labse.*", None),
        (r"all-minilm.*", frozenset({"en"})),  # the local default too: all-MiniLM-L6-v2-int8
        (r"nomic-embed-text(-v1(\.5)?)?(:.*)?", frozenset({"en"})),
        (r"mxbai-embed-large.*", frozenset({"en"})),
        (r"snowflake-arctic-embed(:.*)?", frozenset({"en"})),
        (r"granite-embedding(:30m.*)?", frozenset({"en"})),
        (r"bge-(small|base|large)-en.*", frozenset({"en"})),
        (r"e5-(small|base|large).*", frozenset({"en"})),
    )
)


@dataclass(frozen=True)
class Coverage:
    """What an embedder covers: ``languages`` None means multilingual when ``known``, and
    nothing known otherwise."""

    name: str
    languages: frozenset[str] | None
    known: bool

    @property
    def multilingual(self) -> bool:
        return self.known and self.languages is None

    def covers(self, tag: str) -> bool | None:
        """Whether a document in ``tag`` is embedded meaningfully; None when unknown."""
        if not self.known:
            return None
        if self.languages is None:
            return True
        base = tag.split("-")[0]
        # "zh" covers "zh-Hant"; a model listed as "zh-Hans" covers an undetermined "zh" too.
        return any(t == tag or t == base or t.split("-")[0] == tag for t in self.languages)


def coverage(name: str, setting: str | None = None) -> Coverage:
    """The languages of the embedder called ``name``; ``setting`` (QUIRE_EMBED_LANGUAGES:
    "multilingual" or "en,ja", already validated) overrides the name."""
    if setting:
        if setting == "multilingual":
            return Coverage(name, None, True)
        return Coverage(name, frozenset(setting.split(",")), True)
    model = name.split(":", 1)[1] if name.startswith(("local:", "ollama:")) else name
    model = model.rsplit("/", 1)[-1]
    for pattern, langs in MODELS:
        if pattern.fullmatch(model):
            return Coverage(name, langs, True)
    return Coverage(name, None, False)


def library_languages(
    held: Sequence[tuple[str, int, int]], undetected: int, embedder: Coverage
) -> dict[str, Any]:
    """The languages the library holds (``held``: tag, documents, chunks), each with its counts
    and whether ``embedder`` covers it; documents without a detected language; a hint when
    some language is not covered."""
    missing = [tag for tag, _, _ in held if embedder.covers(tag) is False]
    unknown = [tag for tag, _, _ in held if embedder.covers(tag) is None]
    rows = [
        {
            "language": tag,
            "name": language_name(tag),
            "documents": docs,
            "chunks": chunk_count,
            "covered": embedder.covers(tag),
        }
        for tag, docs, chunk_count in held
    ]
    return {
        "embedder": {
            "name": embedder.name,
            "languages": sorted(embedder.languages) if embedder.languages is not None else None,
            "multilingual": embedder.multilingual,
            "known": embedder.known,
        },
        "languages": rows,
        "undetected": undetected,
        "hint": coverage_hint(embedder, missing)
        or (unknown_hint(embedder) if set(unknown) - {"en"} else None),
    }


#: What to do when the embedder misses a language the library holds.
REEMBED = (
    "then restart Quire (`make run`, or `quire serve` and `quire worker`): the worker "
    "re-embeds every chunk, and search uses BM25 alone until it is done"
)


def coverage_hint(embedder: Coverage, missing: Sequence[str]) -> str | None:
    """How to cover ``missing`` languages with a multilingual embedder; None when none miss."""
    if not missing:
        return None
    names = ", ".join(language_name(t) for t in missing)
    return (
        f"{embedder.name} does not cover {names}: set QUIRE_EMBEDDER=ollama "
        "QUIRE_OLLAMA_EMBED_MODEL=bge-m3 (after `ollama pull bge-m3`), or put a multilingual "
        f"ONNX model in QUIRE_EMBED_MODEL_DIR; {REEMBED}"
    )


def unknown_hint(embedder: Coverage) -> str:
    return (
        f"which languages {embedder.name} covers is not known: set QUIRE_EMBED_LANGUAGES "
        "(multilingual, or a list such as en,ja)"
    )
