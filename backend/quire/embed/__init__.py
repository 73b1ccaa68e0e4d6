"""Embedders: local ONNX (default, offline) and Ollama, behind one protocol.

Importing this package loads nothing; :func:`make_embedder` does, when called::

    embedder = make_embedder(settings)
    vectors = embedder.embed(["first passage", "second passage"])  # (2, embedder.dim) float32
"""

from quire.embed.base import Embedder, Vectors, make_embedder

__all__ = ["Embedder", "Vectors", "make_embedder"]
