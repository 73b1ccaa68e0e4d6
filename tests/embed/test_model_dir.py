"""An ONNX embedder the user puts in a folder (QUIRE_EMBED_MODEL_DIR): loaded by the local
embedder under its folder's name, and a change of folder re-embeds the library."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from quire.config import Settings
from quire.embed import make_embedder
from quire.embed.local import MODEL_NAME, TOKENIZER_PATH, LocalEmbedder, default_model_path
from quire.errors import EmbedderUnavailable
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.storage import vectors
from quire.storage.db import Database
from tests.e2e.helpers import integrity, write_long_text

TEXTS = ["The cat sat on the mat.", "Aspirin lowers the risk of a heart attack."]


def place_model(models: Path, name: str) -> Path:
    """The packaged MiniLM files copied into ``models/name``, as a user would put a model."""
    folder = models / name
    (folder / "onnx").mkdir(parents=True)
    shutil.copy(default_model_path(), folder / "onnx" / "model.onnx")
    shutil.copy(TOKENIZER_PATH, folder / "tokenizer.json")
    return folder


def test_a_placed_model_loads_under_its_folder_name(settings: Settings) -> None:
    place_model(settings.data_dir / "models", "minilm-copy")
    placed = settings.model_copy(update={"embed_model_dir": Path("minilm-copy")})
    embedder = make_embedder(placed)
    try:
        assert isinstance(embedder, LocalEmbedder)
        assert embedder.name == "local:minilm-copy" and embedder.dim == 384
        assert embedder.max_tokens == placed.embed_max_tokens
        with LocalEmbedder() as default:
            # The same weights with mean pooling: the same vectors as the packaged model.
            np.testing.assert_allclose(embedder.embed(TEXTS), default.embed(TEXTS), atol=1e-5)
    finally:
        embedder.close()


def test_cls_pooling_takes_the_first_token(settings: Settings, tmp_path: Path) -> None:
    folder = place_model(tmp_path / "elsewhere", "any")  # an absolute path is taken as is
    cls = settings.model_copy(update={"embed_model_dir": folder, "embed_pooling": "cls"})
    embedder = make_embedder(cls)
    try:
        with LocalEmbedder() as mean:
            vecs = embedder.embed(TEXTS)
            assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
            assert not np.allclose(vecs, mean.embed(TEXTS), atol=1e-3)
    finally:
        embedder.close()


def test_a_folder_without_a_usable_model_says_what_is_missing(settings: Settings) -> None:
    models = settings.data_dir / "models"
    missing = settings.model_copy(update={"embed_model_dir": Path("nowhere")})
    with pytest.raises(EmbedderUnavailable, match="is not a folder"):
        make_embedder(missing)
    (models / "empty").mkdir(parents=True)
    with pytest.raises(EmbedderUnavailable, match="no .onnx file"):
        make_embedder(settings.model_copy(update={"embed_model_dir": Path("empty")}))
    folder = place_model(models, "two")
    shutil.copy(folder / "onnx" / "model.onnx", folder / "onnx" / "other.onnx")
    (folder / "onnx" / "model.onnx").rename(folder / "onnx" / "first.onnx")
    with pytest.raises(EmbedderUnavailable, match="several ONNX files"):
        make_embedder(settings.model_copy(update={"embed_model_dir": Path("two")}))
    (folder / "onnx" / "other.onnx").unlink()
    (folder / "tokenizer.json").unlink()
    with pytest.raises(EmbedderUnavailable, match="tokenizer file not found"):
        make_embedder(settings.model_copy(update={"embed_model_dir": Path("two")}))


def test_changing_the_model_folder_re_embeds_the_library(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    path = write_long_text(tmp_path / "notes.txt", paragraphs=4)
    add_file(db, settings.files_dir, path, path.name, max_bytes=settings.max_upload_bytes)
    Worker(settings, db=db).run(drain=True)
    with db.read() as conn:
        meta = vectors.read_meta(conn)
    assert meta is not None and meta.model == MODEL_NAME

    place_model(settings.data_dir / "models", "my-multilingual")
    placed = settings.model_copy(update={"embed_model_dir": Path("my-multilingual")})
    worker = Worker(placed, db=db)
    worker.run(drain=True)
    worker.close()
    with db.read() as conn:
        meta = vectors.read_meta(conn)
        jobs = conn.exec_driver_sql("SELECT kind, status FROM ingest_jobs ORDER BY id").all()
        chunks = conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one()
    assert meta is not None
    assert (meta.model, meta.dim, meta.state) == ("local:my-multilingual", 384, "ready")
    assert [tuple(j) for j in jobs] == [("ingest", "done"), ("reembed", "done")]
    assert integrity(db)["vectors"] == chunks > 0
