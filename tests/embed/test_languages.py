"""Which languages an embedder covers: known models by name, the setting for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from quire.config import Settings
from quire.embed import embedder_name
from quire.embed.languages import coverage
from quire.embed.local import MODEL_NAME


@pytest.mark.parametrize(
    "name",
    [
        "ollama:bge-m3",
        "ollama:bge-m3:567m",
        "ollama:nomic-embed-text-v2-moe",
        "ollama:jeffh/intfloat-multilingual-e5-large:f16",
        "ollama:paraphrase-multilingual",
        "ollama:snowflake-arctic-embed2",
        "ollama:granite-embedding:278m",
        "ollama:qwen3-embedding:0.6b",
        "ollama:jina/jina-embeddings-v3",
        "local:bge-m3",
        "local:multilingual-e5-small",
    ],
)
def test_multilingual_models_by_name(name: str) -> None:
    c = coverage(name)
    assert c.known and c.multilingual and c.languages is None
    assert c.covers("ja") is True and c.covers("zh-Hant") is True


@pytest.mark.parametrize(
    "name",
    [
        MODEL_NAME,
        "ollama:nomic-embed-text",
        "ollama:nomic-embed-text:v1.5",
        "ollama:mxbai-embed-large",
        "ollama:all-minilm:l6-v2",
        "ollama:snowflake-arctic-embed:335m",
        "ollama:granite-embedding",
    ],
)
def test_english_models_by_name(name: str) -> None:
    c = coverage(name)
    assert c.known and not c.multilingual and c.languages == frozenset({"en"})
    assert c.covers("en") is True and c.covers("ja") is False


def test_an_unknown_model_is_unknown_until_the_setting_says() -> None:
    c = coverage("local:my-model")
    assert not c.known and not c.multilingual and c.covers("en") is None
    assert coverage("local:my-model", "multilingual").multilingual
    told = coverage("local:my-model", "en,zh")
    assert told.covers("zh-Hant") is True and told.covers("zh-Hans") is True
    assert told.covers("ja") is False
    # The setting wins over the name: a user who knows better.
    assert coverage(MODEL_NAME, "multilingual").multilingual


def test_the_setting_is_validated_and_spelt_as_stored() -> None:
    assert Settings(embed_languages=" Multilingual ").embed_languages == "multilingual"
    assert Settings(embed_languages="EN, zh-hant").embed_languages == "en,zh-Hant"
    assert Settings(embed_languages="").embed_languages is None
    with pytest.raises(ValidationError, match="language tags"):
        Settings(embed_languages="en,日本語")


def test_the_name_is_known_without_loading_the_model(tmp_path: Path) -> None:
    assert embedder_name(Settings(data_dir=tmp_path)) == MODEL_NAME
    ollama = Settings(data_dir=tmp_path, embedder="ollama", ollama_embed_model="bge-m3:latest")
    assert embedder_name(ollama) == "ollama:bge-m3"
    placed = Settings(data_dir=tmp_path, embed_model_dir=Path("multilingual-e5-small"))
    assert embedder_name(placed) == "local:multilingual-e5-small"
