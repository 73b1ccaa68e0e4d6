"""Embedders: local ONNX (default, offline) and Ollama, behind one protocol (base.py).

Importing this package loads nothing; :func:`make_embedder` does, when called::

    embedder = make_embedder(settings)
    vectors = embedder.embed(["first passage", "second passage"])  # (2, embedder.dim) float32
"""

from __future__ import annotations

from pathlib import Path

from quire.config import Settings
from quire.embed.base import Embedder, Vectors
from quire.errors import EmbedderUnavailable

__all__ = ["Embedder", "Vectors", "embedder_name", "make_embedder", "resolve_embed_model_dir"]


def resolve_embed_model_dir(settings: Settings) -> Path | None:
    """``embed_model_dir`` with a relative path taken under ``data_dir/models``; None if unset."""
    configured = settings.embed_model_dir
    if configured is None:
        return None
    configured = configured.expanduser()
    return configured if configured.is_absolute() else settings.data_dir / "models" / configured


def embedder_name(settings: Settings) -> str:
    """The name the configured embedder stores beside its vectors, without loading it."""
    if settings.embedder == "ollama":
        from quire.ollama_api import bare_model  # imports httpx: only when asked

        return f"ollama:{bare_model(settings.ollama_embed_model)}"
    if settings.embedder == "local-sint8":
        from quire.embed.static import STATIC_NAME

        return STATIC_NAME
    folder = resolve_embed_model_dir(settings)
    if folder is None:
        from quire.embed.local import MODEL_NAME

        return MODEL_NAME
    return f"local:{folder.name}"


def _model_file(folder: Path) -> Path:
    """The one ONNX file in ``folder`` (or its ``onnx/``); with several, ``model_quantized``
    then ``model``."""
    if not folder.is_dir():
        raise EmbedderUnavailable(
            f"QUIRE_EMBED_MODEL_DIR {folder} is not a folder: put the model's .onnx file and "
            "its tokenizer.json there"
        )
    found = [p for d in (folder, folder / "onnx") for p in sorted(d.glob("*.onnx"))]
    if len(found) == 1:
        return found[0]
    for stem in ("model_quantized", "model"):
        for path in found:
            if path.stem == stem:
                return path
    if not found:
        raise EmbedderUnavailable(f"no .onnx file in {folder} (nor in its onnx/)")
    names = ", ".join(p.name for p in found)
    raise EmbedderUnavailable(f"{folder} holds several ONNX files ({names}): keep one")


def make_embedder(settings: Settings) -> Embedder:
    """Build the embedder the settings ask for (loads the model or prepares the client)."""
    if settings.embedder == "local-sint8":
        from quire.embed.static import static_embedder

        if settings.embed_model_dir is not None:
            raise EmbedderUnavailable(
                "QUIRE_EMBEDDER=local-sint8 rebuilds the packaged MiniLM; it does not apply to "
                "QUIRE_EMBED_MODEL_DIR (use QUIRE_EMBEDDER=local with that folder)"
            )
        return static_embedder(
            settings.data_dir / "models",
            threads=settings.embed_threads,
            batch_size=settings.embed_batch,
        )
    if settings.embedder == "local":
        from quire.embed.local import LocalEmbedder

        folder = resolve_embed_model_dir(settings)
        if folder is None:
            return LocalEmbedder(threads=settings.embed_threads, batch_size=settings.embed_batch)
        return LocalEmbedder(
            threads=settings.embed_threads,
            batch_size=settings.embed_batch,
            max_tokens=settings.embed_max_tokens,
            model_path=_model_file(folder),
            tokenizer_path=folder / "tokenizer.json",
            name=embedder_name(settings),
            pooling=settings.embed_pooling,
        )
    from quire.embed.ollama import OllamaEmbedder

    return OllamaEmbedder(
        settings.ollama_url,
        settings.ollama_embed_model,
        timeout_s=settings.ollama_timeout_s,
        batch_size=settings.embed_batch,
    )
