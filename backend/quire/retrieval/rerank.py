"""Cross-encoder reranking on ONNX Runtime: raw logits of (query, passage) pairs, no PyTorch.

The default model is ``cross-encoder/ms-marco-MiniLM-L-6-v2`` exported to ONNX (ideally int8)
with its ``tokenizer.json``, placed under ``<data_dir>/models/``. Its head has ONE label, so
the raw logit is the score: a pipeline that applies softmax to a one-label head returns 1.0
for every passage, which silently turns reranking into a no-op. Nothing here normalises.

``rerank`` spends at most a time budget: the first small batch measures the cost per pair,
later batches are sized to fit what is left, and candidates never scored keep their fusion
order after the scored ones that passed the threshold.

    reranker = load_reranker(settings)  # None when the model is not installed
    if reranker is not None:
        outcome = rerank(reranker, query, [(chunk_id, text), ...], top_n=35, budget_ms=1500)
"""

from __future__ import annotations

import logging
import math
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from quire.embed.runs import token_runs
from quire.errors import ServiceUnavailable

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

    from quire.config import Settings

log = logging.getLogger(__name__)

Logits = npt.NDArray[np.float32]

#: Where the default model lives, under ``<data_dir>/models/``.
DEFAULT_MODEL_DIR = Path("cross-encoder") / "ms-marco-MiniLM-L-6-v2"
#: Pairs per ``rerank`` step once the cost per pair is known (and the most per ONNX run).
BATCH_SIZE = 64
#: Padded tokens per ONNX run. Small runs are cheaper per pair AND far leaner: the attention
#: tensors of a 64 x 256 run (~200 MB each) fall out of cache. Measured with a model of
#: ms-marco-MiniLM-L-6-v2's shape, 256 tokens, 1 thread, CPU ms/pair: int8 34.5 as one run of
#: 64 pairs, 20.7 in runs of 512 tokens; fp32 69 vs 48; peak RSS 1.3 GB vs 0.2 GB (at 512
#: tokens/pair: 4.5 GB vs 0.2 GB). bench/rerank.py.
MAX_BATCH_TOKENS = 512
#: Pairs of the first run when a budget is set: small, so a slow machine or a tiny budget
#: still costs one short run before the estimate exists.
PROBE_BATCH = 8
#: BERT's position table: no pair can be longer.
MAX_POSITIONS = 512
_NOT_FOUND = (
    "reranker model not found at %s; the first hits are ordered by their best sentence "
    "instead (`quire models pull reranker` installs it)"
)


class RerankerUnavailable(ServiceUnavailable):
    """The reranker model cannot be loaded (missing, corrupt or of the wrong shape)."""

    code = "reranker_unavailable"
    retryable = False


class Reranker(Protocol):
    """Scores (query, passage) pairs; a higher score means more relevant."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> Logits:
        """Raw logits, float32, one per passage, in input order."""
        ...

    def close(self) -> None:
        """Release the model."""
        ...


@runtime_checkable
class CountsTruncation(Protocol):
    """A reranker that also reports how many passages it cut at its token limit."""

    def score_counted(self, query: str, passages: Sequence[str]) -> tuple[Logits, int]:
        """Raw logits as ``score`` does, and the number of passages truncated."""
        ...


class RerankReport(BaseModel):
    """What reranking did to one candidate list, as a search reports it."""

    model: str
    scored: int
    skipped: int = Field(description="Candidates over the time budget (kept fusion order).")
    truncated_tokens: int = Field(description="Passages cut at the token limit.")
    mean_chars: float = Field(
        description="Characters per passage read (each hit's rerank_span says which)."
    )
    elapsed_ms: float
    fallback: bool = Field(description="None passed the score threshold: fusion order kept.")
    summary: str = Field(description="The same, as one sentence.")


@dataclass
class RerankOutcome:
    """What reranking did to one candidate list (shown to users)."""

    order: list[int]
    scores: dict[int, float] = field(default_factory=dict)
    scored: int = 0
    skipped: int = 0
    truncated_tokens: int = 0
    mean_chars: float = 0.0
    elapsed_ms: float = 0.0
    fallback: bool = False
    model: str = ""

    def summary(self) -> str:
        """One sentence for people: what was scored, skipped, cut, and how long it took."""
        parts = [
            f"reranked {self.scored} of {self.scored + self.skipped} with {self.model}"
            f" (~{self.mean_chars:.0f} characters each)"
        ]
        if self.skipped:
            parts.append(f"{self.skipped} over the time budget kept fusion order")
        if self.truncated_tokens:
            parts.append(f"{self.truncated_tokens} passages cut at the token limit")
        if self.fallback:
            parts.append("none passed the score threshold, so fusion order was kept")
        return "; ".join(parts) + f" ({self.elapsed_ms:.0f} ms)"

    def report(self) -> RerankReport:
        """Everything but the order and the scores (those go on the hits)."""
        return RerankReport(
            model=self.model,
            scored=self.scored,
            skipped=self.skipped,
            truncated_tokens=self.truncated_tokens,
            mean_chars=round(self.mean_chars, 1),
            elapsed_ms=self.elapsed_ms,
            fallback=self.fallback,
            summary=self.summary(),
        )


def find_model_file(model_dir: Path) -> Path | None:
    """The ONNX file to load from ``model_dir`` (or its ``onnx/``): int8 first, then fp32."""
    found = [p for d in (model_dir, model_dir / "onnx") for p in sorted(d.glob("*.onnx"))]
    return min(found, key=_preference, default=None)


def _preference(path: Path) -> tuple[int, int]:
    # optimum writes model_quantized.onnx; Hugging Face ``onnx/`` folders hold one int8 file
    # per CPU family (model_qint8_arm64, model_quint8_avx2 ...) and fp32/fp16 variants
    # (model.onnx, model_O1..O4): take int8 for this machine, else the plain fp32 export.
    stem = path.stem.lower()
    if "quantized" in stem or "int8" in stem:
        arm = platform.machine().lower() in ("arm64", "aarch64")
        own = "arm64" if arm else "avx2"  # AVX2 runs on every x86-64 CPU still in use
        return 0, 0 if stem == "model_quantized" else 1 if own in stem else 2
    return 1, 0 if stem == "model" else 1


class CrossEncoderReranker:
    """A BERT sequence classifier with one label, run by ONNX Runtime on the CPU."""

    def __init__(
        self,
        model_dir: Path,
        *,
        threads: int = 1,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = 256,
        max_batch_tokens: int | None = MAX_BATCH_TOKENS,
        name: str | None = None,
    ) -> None:
        if threads < 1 or batch_size < 1 or (max_batch_tokens or 1) < 1:
            raise ValueError("threads, batch_size and max_batch_tokens must be >= 1")
        if not 8 <= max_tokens <= MAX_POSITIONS:
            raise ValueError(f"max_tokens must be within 8..{MAX_POSITIONS}")
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:
            raise RerankerUnavailable(f"the reranker needs onnxruntime and tokenizers: {e}") from e
        model_path = find_model_file(model_dir)
        if model_path is None:
            raise RerankerUnavailable(f"no .onnx file in {model_dir}")
        tokenizer_path = model_dir / "tokenizer.json"
        if not tokenizer_path.is_file():
            raise RerankerUnavailable(f"tokenizer.json not found in {model_dir}")
        self.model_path = model_path
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.max_batch_tokens = max_batch_tokens
        self.name = name or f"{model_dir.name}/{model_path.name}"

        try:
            pairs = Tokenizer.from_file(str(tokenizer_path))
        except Exception as e:
            raise RerankerUnavailable(f"cannot load the tokenizer {tokenizer_path}: {e}") from e
        # Shipped tokenizer.json files often pad to a fixed width and truncate "longest
        # first": pad per batch instead, and cut the passage, never the question.
        pairs.no_padding()
        pairs.enable_truncation(max_tokens, strategy="only_second")
        self._pairs: Tokenizer = pairs
        # "only_second" fails when the query alone exceeds the limit, so queries are cut
        # beforehand with an untruncated copy.
        queries = Tokenizer.from_str(pairs.to_str())
        queries.no_truncation()
        self._queries: Tokenizer = queries
        self._max_query_tokens = max_tokens // 2
        self._pad_id = pairs.token_to_id("[PAD]") or 0

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3  # ORT writes to stderr, past `logging`: errors only
        try:
            self._session: Any = ort.InferenceSession(
                str(model_path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
        except Exception as e:
            raise RerankerUnavailable(f"cannot load the reranker model {model_path}: {e}") from e
        # Exports differ: feed exactly what the graph declares, in the dtype it declares.
        self._inputs = {
            i.name: np.int32 if i.type == "tensor(int32)" else np.int64
            for i in self._session.get_inputs()
        }
        missing = {"input_ids", "attention_mask"} - self._inputs.keys()
        if missing:
            raise RerankerUnavailable(f"{model_path} lacks the inputs {sorted(missing)}")
        outputs = self._session.get_outputs()
        out = next((o for o in outputs if o.name == "logits"), outputs[0])
        if len(out.shape) > 1 and out.shape[-1] not in (1, None) and isinstance(out.shape[-1], int):
            raise RerankerUnavailable(
                f"{model_path} has {out.shape[-1]} labels; a one-label relevance head is needed"
            )
        self._output = out.name
        log.info(
            "reranker %s loaded from %s (%d thread(s), %d tokens/pair, %s tokens/run)",
            self.name,
            model_path,
            threads,
            max_tokens,
            max_batch_tokens,
        )

    def score(self, query: str, passages: Sequence[str]) -> Logits:
        """Raw logits, float32, one per passage, in input order."""
        return self.score_counted(query, passages)[0]

    def score_counted(self, query: str, passages: Sequence[str]) -> tuple[Logits, int]:
        """Raw logits, and how many passages were cut at ``max_tokens``."""
        out = np.empty(len(passages), dtype=np.float32)
        if not passages:
            return out, 0
        query = self._cut_query(query)
        encodings = self._pairs.encode_batch([(query, p) for p in passages])
        truncated = sum(1 for e in encodings if e.overflowing)
        # Length-sorted runs pad less; padding is masked, so a logit does not depend on its run.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        for run in self._runs(order, [len(encodings[i].ids) for i in order]):
            out[run] = self._forward([encodings[i] for i in run])
        return out, truncated

    def _runs(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        return token_runs(
            order, lengths, batch_size=self.batch_size, max_batch_tokens=self.max_batch_tokens
        )

    def _cut_query(self, query: str) -> str:
        enc = self._queries.encode(query, add_special_tokens=False)
        if len(enc.ids) <= self._max_query_tokens:
            return query
        log.debug("query cut to %d tokens for reranking", self._max_query_tokens)
        return query[: enc.offsets[self._max_query_tokens - 1][1]]

    def _forward(self, batch: list[Encoding]) -> Logits:
        session = self._session
        if session is None:
            raise RerankerUnavailable("the reranker was closed")
        width = max(len(e.ids) for e in batch)
        ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        types = np.zeros((len(batch), width), dtype=np.int64)
        for row, enc in enumerate(batch):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
            types[row, :n] = enc.type_ids
        given = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feeds = {
            k: v.astype(dt, copy=False) for k, v in given.items() if (dt := self._inputs.get(k))
        }
        logits = np.asarray(session.run([self._output], feeds)[0], dtype=np.float32)
        if logits.size != len(batch):
            raise RerankerUnavailable(
                f"{self.model_path} returned logits of shape {logits.shape} for {len(batch)} pairs"
            )
        return logits.reshape(len(batch))

    def close(self) -> None:
        """Drop the ONNX session (the reranker cannot be used afterwards)."""
        self._session = None

    def __enter__(self) -> CrossEncoderReranker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve_model_dir(settings: Settings) -> Path:
    """The reranker directory: ``rerank_model_dir``, relative paths under ``data_dir/models``."""
    models = settings.data_dir / "models"
    configured = settings.rerank_model_dir
    if configured is None:
        return models / DEFAULT_MODEL_DIR
    configured = configured.expanduser()
    return configured if configured.is_absolute() else models / configured


def load_reranker(settings: Settings) -> Reranker | None:
    """The configured reranker, or None (with one warning) when it is absent or unusable."""
    model_dir = resolve_model_dir(settings)
    if not model_dir.is_dir() or find_model_file(model_dir) is None:
        log.warning(_NOT_FOUND, model_dir)
        return None
    try:
        return CrossEncoderReranker(
            model_dir, threads=settings.rerank_threads, max_tokens=settings.rerank_max_tokens
        )
    except RerankerUnavailable as e:
        # A broken install degrades search quality, not availability.
        log.warning(
            "%s; the first hits are ordered by their best sentence instead "
            "(`quire models pull --force`)",
            e.message,
        )
        return None


def rerank(
    reranker: Reranker,
    query: str,
    items: Sequence[tuple[int, str]],
    *,
    top_n: int,
    min_logit: float = -5.0,
    fallback_top: int = 20,
    budget_ms: float | None = None,
    batch_size: int = BATCH_SIZE,
) -> RerankOutcome:
    """Reorder (chunk_id, passage) ``items``, given in fusion order, by cross-encoder logit."""
    if top_n < 1 or fallback_top < 0 or batch_size < 1:
        raise ValueError("top_n and batch_size must be >= 1, fallback_top >= 0")
    if budget_ms is not None and budget_ms < 0:
        raise ValueError("budget_ms must be >= 0 or None")
    start = time.perf_counter()
    ids: list[int] = []
    passages: list[str] = []
    seen: set[int] = set()
    for chunk_id, text in items:
        if chunk_id not in seen:  # fusion dedups already; a repeat would only cost time
            seen.add(chunk_id)
            ids.append(chunk_id)
            passages.append(text)

    logits: list[float] = []
    truncated = 0
    while len(logits) < len(ids):
        size = _next_batch(len(logits), start, budget_ms, batch_size)
        if size == 0:
            break
        chunk = passages[len(logits) : len(logits) + size]
        if isinstance(reranker, CountsTruncation):
            values, cut = reranker.score_counted(query, chunk)
        else:
            values, cut = reranker.score(query, chunk), 0
        values = np.asarray(values, dtype=np.float32).reshape(-1)
        if values.shape[0] != len(chunk):
            raise ValueError(f"{reranker.name} returned {values.shape[0]} scores for {len(chunk)}")
        logits.extend(float(v) for v in values)
        truncated += cut

    scored = len(logits)
    scores = dict(zip(ids, logits, strict=False))
    # NaN compares false, so a broken score never passes.
    passed = [i for i in range(scored) if logits[i] >= min_logit]
    fallback = scored > 0 and not passed
    if fallback:
        order = ids[: min(fallback_top, top_n)]
    else:
        # sorted() is stable: equal logits keep fusion order.
        ranked = sorted(passed, key=lambda i: -logits[i])
        order = [ids[i] for i in ranked] + ids[scored:]
        order = order[:top_n]
    outcome = RerankOutcome(
        order=order,
        scores=scores,
        scored=scored,
        skipped=len(ids) - scored,
        truncated_tokens=truncated,
        mean_chars=sum(map(len, passages[:scored])) / scored if scored else 0.0,
        elapsed_ms=(time.perf_counter() - start) * 1000,
        fallback=fallback,
        model=reranker.name,
    )
    log.debug("%s", outcome.summary())
    return outcome


def _next_batch(done: int, start: float, budget_ms: float | None, batch_size: int) -> int:
    """Pairs to score next: a full batch without a budget, else what the budget still fits."""
    if budget_ms is None:
        return batch_size
    if done == 0:
        return min(PROBE_BATCH, batch_size)  # always score something: the cost is unknown
    elapsed_ms = (time.perf_counter() - start) * 1000
    per_pair_ms = elapsed_ms / done
    if per_pair_ms <= 0:
        return batch_size
    return max(0, min(batch_size, math.floor((budget_ms - elapsed_ms) / per_pair_ms)))
