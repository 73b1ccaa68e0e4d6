"""What models Quire downloads, where each comes from, where it goes, and what is installed.

    spec = model_spec("reranker", settings)  # repo, revision, target folder
    state = inspect(spec)                    # installed?, which file, from which commit
    state.present, state.model_file, state.manifest

A pulled folder holds one ``.onnx`` file, ``tokenizer.json``, the repo's ``config.json`` and
``quire-model.json`` (the manifest: repo, commit, how the file was made). A folder without a
manifest holds a model put there by hand: it is used, and replaced only by ``pull --force``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from quire.config import Settings
from quire.errors import NotFound
from quire.retrieval.rerank import find_model_file, resolve_model_dir

MANIFEST = "quire-model.json"
#: How the installed ONNX file was made.
Source = Literal["int8", "quantised", "exported"]
SOURCE_TEXT: dict[str, str] = {
    "int8": "int8 ONNX as published",
    "quantised": "fp32 ONNX quantised to int8 at pull time",
    "exported": "PyTorch weights exported to ONNX and quantised to int8 at pull time",
}


@dataclass(frozen=True)
class ModelSpec:
    """One model Quire can pull: what it is for, its Hugging Face repo, where it is installed."""

    name: str
    purpose: str
    repo: str
    revision: str
    target: Path


class Manifest(BaseModel):
    """What ``quire models pull`` installed, written beside the model as ``quire-model.json``."""

    name: str
    repo: str
    revision: str
    commit: str
    source: Source
    model_file: str = Field(description="The ONNX file, relative to the model folder.")
    files: dict[str, int] = Field(description="Every installed file and its size in bytes.")
    pulled_at: datetime
    seconds: dict[str, float] = Field(description="Time per stage: download, convert, check.")
    quire_version: str


@dataclass(frozen=True)
class ModelState:
    """What is installed for one model."""

    spec: ModelSpec
    model_file: Path | None
    tokenizer: bool
    manifest: Manifest | None

    @property
    def present(self) -> bool:
        """A model the reranker can load: an ONNX file and its tokenizer."""
        return self.model_file is not None and self.tokenizer

    @property
    def size(self) -> int:
        """Bytes on disk of the model folder's files."""
        if not self.spec.target.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.spec.target.rglob("*") if p.is_file())

    @property
    def outdated(self) -> bool:
        """Pulled from another repo than the one configured now."""
        return self.manifest is not None and self.manifest.repo != self.spec.repo


def known(settings: Settings) -> dict[str, ModelSpec]:
    """Every model ``quire models pull`` knows, by name. (The embedder ships in a package.)"""
    return {
        "reranker": ModelSpec(
            name="reranker",
            purpose="cross-encoder that reorders search results",
            repo=settings.rerank_repo,
            revision=settings.rerank_revision,
            target=resolve_model_dir(settings),
        )
    }


def model_spec(name: str, settings: Settings) -> ModelSpec:
    """The model called ``name``; NotFound names the known ones."""
    models = known(settings)
    if name not in models:
        raise NotFound(f"no model called {name!r}; known: {', '.join(sorted(models))}")
    return models[name]


def read_manifest(folder: Path) -> Manifest | None:
    """The manifest in ``folder``, or None when there is none (or it cannot be read)."""
    try:
        return Manifest.model_validate(json.loads((folder / MANIFEST).read_text("utf-8")))
    except (OSError, ValueError, ValidationError):
        return None


def inspect(spec: ModelSpec) -> ModelState:
    """What is installed at ``spec.target`` (nothing is loaded)."""
    folder = spec.target
    if not folder.is_dir():
        return ModelState(spec, None, False, None)
    return ModelState(
        spec,
        find_model_file(folder),
        (folder / "tokenizer.json").is_file(),
        read_manifest(folder),
    )
