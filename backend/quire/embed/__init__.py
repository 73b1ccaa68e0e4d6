"""Embedders: local ONNX (default, offline) and Ollama, behind one protocol (base.py).

Importing this package loads nothing; :func:`make_embedder` does, when called::

    embedder = make_embedder(settings)
    vectors = embedder.embed(["first passage", "second passage"])  # (2, embedder.dim) float32
"""

from __future__ import annotations

from quire.config import Settings
from quire.embed.base import Embedder, Vectors

__all__ = ["Embedder", "Vectors", "make_embedder"]


def make_embedder(settings: Settings) -> Embedder:
    """Build the embedder the settings ask for (loads the model or prepares the client)."""
    if settings.embedder == "local":
        from quire.embed.local import LocalEmbedder

        return LocalEmbedder(threads=settings.embed_threads, batch_size=settings.embed_batch)
    from quire.embed.ollama import OllamaEmbedder

    return OllamaEmbedder(
        settings.ollama_url,
        settings.ollama_embed_model,
        timeout_s=settings.ollama_timeout_s,
        batch_size=settings.embed_batch,
    )
