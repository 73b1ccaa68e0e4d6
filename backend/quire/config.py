"""Settings: one class, read from the environment (prefix ``QUIRE_``), validated at start-up."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: "local-sint8": the packaged MiniLM rebuilt with per-row int8 activations (embed/static.py).
EmbedderKind = Literal["local", "local-sint8", "ollama"]
#: Token vectors to one sentence vector: their mean (MiniLM, e5) or the first one (bge-m3).
EmbedPooling = Literal["mean", "cls"]
#: A language tag as Quire stores one: "en", "ja", "zh-Hant", "pt-BR".
LANGUAGE_TAG = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
Fusion = Literal["rrf", "blend"]
#: When a hypothetical passage (HyDE) joins the dense leg; a setting, and per request.
HydeMode = Literal["off", "fusion", "supplement"]


def canonical_tag(tag: str) -> str:
    """A language tag spelt as stored: "ZH-hant" -> "zh-Hant", "pt-br" -> "pt-BR"."""
    first, *rest = tag.strip().split("-")
    parts = [first.lower()]
    for part in rest:
        if len(part) == 4 and part.isalpha():
            parts.append(part.title())  # a script
        elif len(part) in (2, 3):
            parts.append(part.upper())  # a region
        else:
            parts.append(part.lower())
    return "-".join(parts)


class Settings(BaseSettings):
    """Every knob Quire has. The site's configuration page is generated from these fields and
    their descriptions (docs/hooks/settings_page.py), so each needs one (a test checks)."""

    model_config = SettingsConfigDict(env_prefix="QUIRE_", extra="ignore")

    data_dir: Path = Field(
        default=Path("./data"), description="Where the databases and files live."
    )
    # The team library (docs/POSTGRES.md): unset, the library is SQLite under data_dir.
    database_url: SecretStr | None = Field(
        default=None,
        description="postgresql+psycopg://user:password@host/db: the library in PostgreSQL "
        "with pgvector and pg_trgm instead of SQLite files under data_dir.",
    )
    # The team library's shared store (docs/POSTGRES.md): every machine mounts it, wherever.
    originals_dir: Path | None = Field(
        default=None,
        description="Where the original files are kept (default <data_dir>/files): with "
        "workers on several machines, a directory they all mount.",
    )
    max_upload_mb: int = Field(default=200, ge=1, description="Largest accepted upload, in MB.")
    host: str = Field(default="127.0.0.1", description="API bind address.")
    port: int = Field(default=8000, ge=1, le=65535, description="API port.")
    # Access control (api/auth.py): a token is required to listen beyond the loopback.
    api_token: SecretStr | None = Field(
        default=None, description="Bearer token every API route but /api/health requires."
    )
    allow_open_bind: bool = Field(
        default=False,
        description="Listen on a non-loopback address without a token (private networks only).",
    )
    cors_origins: str = Field(
        default="", description="Comma-separated origins allowed cross-origin (empty: none)."
    )

    log_level: str = Field(default="INFO", description="Logging level of the CLI and servers.")

    # Ingest
    chunk_chars: int = Field(default=1500, ge=200, description="Target chunk size in characters.")
    chunk_overlap: int = Field(default=100, ge=0, description="Overlap between chunks of a page.")
    ocr_min_words: int = Field(
        default=10, ge=0, description="Pages with fewer words in the text layer are OCRed."
    )
    ocr_dpi: int = Field(default=300, ge=72, le=600, description="Rasterisation DPI for OCR.")
    ocr_workers: int = Field(default=2, ge=1, description="OCR processes (one thread each).")
    workers: int = Field(
        default=0,
        ge=0,
        le=64,
        description="Ingest worker processes `make run` starts; 0: one per core, as many as "
        "half the memory holds at 1 GB each (cli/common.py default_workers).",
    )
    ocr_lang: str = Field(default="eng", description="Tesseract language(s), e.g. eng+deu.")
    job_timeout_s: float = Field(default=1800, gt=0, description="Per-document time limit.")
    job_max_attempts: int = Field(default=3, ge=1, description="Tries for transient failures.")
    job_memory_mb: int = Field(
        default=4096, ge=256, description="Address-space limit of a document's extraction process."
    )
    max_pages: int = Field(default=20000, ge=1, description="Largest page count accepted.")
    max_unpacked_mb: int = Field(
        default=500, ge=1, description="Largest unpacked size of an EPUB (zip bombs), in MB."
    )
    soffice: str = Field(
        default="soffice",
        description="LibreOffice's command, found on PATH: it renders Word and slide files as "
        "PDF for the source view and reads .doc, .ppt, .xls and .rtf; empty: never run it.",
    )
    convert_timeout_s: float = Field(
        default=180, gt=0, description="Time limit of one LibreOffice conversion, in seconds."
    )
    worker_poll_s: float = Field(default=0.5, gt=0, description="Worker idle poll interval.")
    worker_nice: int = Field(
        default=10,
        ge=0,
        le=19,
        description="How much `quire worker` lowers its CPU priority (os.nice; its extraction "
        "children inherit it), so that searches win the cores while it ingests; 0: none.",
    )
    job_stale_s: float = Field(
        default=60, gt=0, description="A running job without heartbeat this long is reclaimed."
    )

    # Embedding
    embedder: EmbedderKind = Field(
        default="local",
        description="Embedder kind: local (packaged MiniLM), local-sint8 (QUIRE_EMBEDDER="
        "local-sint8: the same weights rebuilt per-row int8 under <data_dir>/models, ~1.7x "
        "faster, its own vectors) or ollama.",
    )
    embed_batch: int = Field(default=64, ge=1, description="Chunks per embedding batch.")
    embed_threads: int = Field(default=1, ge=1, description="ONNX Runtime intra-op threads.")
    ollama_url: str = Field(default="http://127.0.0.1:11434", description="Ollama base URL.")
    ollama_embed_model: str = Field(
        default="nomic-embed-text", description="Ollama embedding model (embedder=ollama)."
    )
    ollama_timeout_s: float = Field(default=120, gt=0, description="Ollama request timeout.")
    embed_model_dir: Path | None = Field(
        default=None,
        description="An ONNX embedding model put in a folder (one .onnx file + tokenizer.json), "
        "used by the local embedder instead of MiniLM; relative to <data_dir>/models.",
    )
    embed_pooling: EmbedPooling = Field(
        default="mean",
        description="How embed_model_dir's model turns tokens into one vector: mean or cls.",
    )
    embed_max_tokens: int = Field(
        default=512, ge=8, le=8192, description="Tokens per chunk for embed_model_dir's model."
    )
    embed_languages: str | None = Field(
        default=None,
        description="Languages the embedder covers: multilingual, or a comma list (en,ja); "
        "None: known from the model's name.",
    )

    # Language model (chat answers); QUIRE_OLLAMA_URL is shared with the embedder
    llm_backends: str = Field(
        default="ollama,openai",
        description="LLM backends in the order tried: ollama, openai; none disables the LLM.",
    )
    ollama_chat_model: str = Field(default="llama3.2", description="Ollama chat model.")
    openai_url: str = Field(
        default="", description="OpenAI-compatible server URL (empty: skip that backend)."
    )
    openai_model: str = Field(
        default="", description="Model on the OpenAI-compatible server (empty: its first)."
    )
    openai_api_key: SecretStr | None = Field(
        default=None, description="Bearer key for the OpenAI-compatible server, if it needs one."
    )
    llm_connect_timeout_s: float = Field(default=5, gt=0, description="LLM connect timeout.")
    llm_first_token_timeout_s: float = Field(
        default=120, gt=0, description="Longest wait for an LLM's first token (model loading)."
    )
    llm_idle_timeout_s: float = Field(
        default=60, gt=0, description="Longest silence between two streamed LLM tokens."
    )
    llm_num_ctx_max: int = Field(
        default=8192,
        ge=2048,
        description="Largest Ollama context (num_ctx) sized to a prompt, in tokens; the model's "
        "own limit (/api/show) caps it too. Prompts are trimmed to fit, and say so.",
    )
    openai_context_tokens: int = Field(
        default=4096,
        ge=2048,
        description="The context of the OpenAI-compatible server's model, in tokens (llama-server "
        "-c, vLLM --max-model-len); capped by what /v1/models advertises. Prompts are trimmed "
        "to fit.",
    )
    llm_retries: int = Field(
        default=2, ge=0, description="Retries of an LLM call that failed before its first token."
    )

    # Retrieval
    pool_precise: int = Field(default=50, ge=1, description="Candidates fused, precise strategy.")
    pool_exhaustive: int = Field(
        default=80, ge=1, description="Candidates fused, exhaustive strategy."
    )
    dense_k: int = Field(default=40, ge=1, description="Dense neighbours per query variation.")
    # k 10 and exact 0.5 (not the usual 60 and 1.0): on SciFact's train queries hybrid nDCG@10
    # rose from 0.707 to 0.732 (test 0.700 -> 0.723); `quire eval` re-checks it per corpus.
    rrf_k: int = Field(default=10, ge=1, description="Reciprocal Rank Fusion constant k.")
    fusion: Fusion = Field(
        default="rrf", description="rrf, or blend (Pagepiper's normalised 50/50 scores)."
    )
    bm25_max_df: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Drop query terms found in more than this share of chunks (0: keep all).",
    )
    bm25_cache_mb: float = Field(
        default=128,
        ge=0,
        description=(
            "Memory for the BM25 leg's cache: per-term scores on SQLite, the frequent terms' "
            "stored entries on PostgreSQL (0: none, every query reads the index)."
        ),
    )
    bm25_frequent_df: int = Field(
        default=1000,
        ge=0,
        description=(
            "Terms in at least this many chunks have their postings stored next to FTS5, so "
            "that BM25 scores them without walking FTS5's long posting lists (0: never)."
        ),
    )
    weight_bm25: float = Field(default=1.0, ge=0, description="RRF weight of the BM25 leg.")
    weight_dense: float = Field(default=1.0, ge=0, description="RRF weight of the dense leg.")
    weight_exact: float = Field(default=0.5, ge=0, description="RRF weight of the exact leg.")
    weight_window: float = Field(
        default=0.5,
        ge=0,
        description="RRF weight of the window stage (candidates by their best sentences; 0: off).",
    )
    window_sentences: int = Field(
        default=3, ge=1, le=10, description="Sentences in a window of the window stage."
    )
    hyde_mode: HydeMode = Field(
        default="supplement", description="When a hypothetical passage joins the dense leg."
    )
    hyde_threshold_score: float = Field(
        default=0.7, description="supplement: use HyDE when the best dense cosine is below."
    )
    hyde_threshold_count: int = Field(
        default=5, ge=0, description="supplement: use HyDE when fewer dense results than this."
    )
    dense_mirror: bool = Field(
        default=True, description="Serve KNN from an in-memory copy of the vectors (faster)."
    )
    warm_up: bool = Field(
        default=True,
        description="Load what search needs when the API starts, in the background, so that "
        "the first question is as fast as the rest (/api/health says `warm`).",
    )

    # Reranking
    rerank_model_dir: Path | None = Field(
        default=None,
        description="Cross-encoder directory (ONNX + tokenizer.json); relative to "
        "<data_dir>/models; None: <data_dir>/models/cross-encoder/ms-marco-MiniLM-L-6-v2.",
    )
    rerank_repo: str = Field(
        default="cross-encoder/ms-marco-MiniLM-L-6-v2",
        pattern=r"^[\w.-]+(/[\w.-]+)?$",
        description="Hugging Face repo `quire models pull reranker` fetches into rerank_model_dir.",
    )
    rerank_revision: str = Field(
        default="main", min_length=1, description="Branch, tag or commit of rerank_repo to pull."
    )
    rerank_threads: int = Field(default=1, ge=1, description="Reranker ONNX Runtime threads.")
    rerank_max_tokens: int = Field(
        default=256, ge=8, le=512, description="Tokens per (query, passage) pair; passages cut."
    )
    rerank_passage_chars: int = Field(
        default=600,
        ge=0,
        description="Characters of each candidate the reranker reads: its best sentences, "
        "widened to this (0: the whole chunk, cut at rerank_max_tokens).",
    )
    rerank_budget_ms: int = Field(
        default=1500, ge=0, description="Reranking time per search; the rest keep fusion order."
    )
    rerank_min_logit: float = Field(
        default=-5.0, description="Reranked passages below this raw logit are dropped."
    )

    # Perplexity sync (Playwright drives Debian's Chromium; Playwright's own download is unused)
    perplexity_url: str = Field(
        default="https://www.perplexity.ai",
        description="Perplexity base URL: the site the browser logs in to and fetches from.",
    )
    chromium: Path = Field(
        default=Path("/usr/bin/chromium"), description="Chromium executable Playwright drives."
    )
    perplexity_delay_s: float = Field(
        default=1.0, ge=0, le=60, description="Pause between two Perplexity requests."
    )
    perplexity_retries: int = Field(
        default=4, ge=0, le=10, description="Retries of a request answered 429/5xx or not at all."
    )
    perplexity_backoff_s: float = Field(
        default=2.0, ge=0, le=600, description="First retry's wait without Retry-After (doubles)."
    )
    perplexity_backoff_max_s: float = Field(
        default=60, ge=0, le=3600, description="Longest wait before a retry (caps Retry-After)."
    )
    perplexity_timeout_s: float = Field(
        default=30, gt=0, le=600, description="Per-request and page-load timeout."
    )
    perplexity_page_size: int = Field(
        default=50, ge=1, le=100, description="Threads per list request (Perplexity's own: 50)."
    )
    perplexity_checkpoint_every: int = Field(
        default=10, ge=1, description="Write the sync checkpoint after this many threads."
    )
    perplexity_login_timeout_s: float = Field(
        default=300, gt=0, le=3600, description="How long `quire perplexity login` waits."
    )

    # MCP server (`quire mcp`, /mcp): the ingest tool writes, so it is off unless switched on
    mcp_ingest: bool = Field(
        default=False, description="Let MCP clients add documents with the ingest tool."
    )
    mcp_ingest_dirs: str = Field(
        default="",
        description="Comma-separated folders whose files MCP ingest may add (empty: none).",
    )
    mcp_ingest_urls: str = Field(
        default="",
        description="Comma-separated URL prefixes MCP ingest may download from (empty: none).",
    )
    # Links (web/fetch.py, which checks the list): public addresses only unless allowed here
    fetch_allow_hosts: str = Field(
        default="",
        description="Comma-separated host names, addresses or networks (10.0.0.0/8) links may "
        "reach although they are not public (an intranet wiki); empty: public addresses only.",
    )
    fetch_timeout_s: float = Field(
        default=30, gt=0, le=600, description="Time limit of fetching one link, in seconds."
    )
    watch_dirs: str = Field(
        default="",
        description="Folders `quire watch` keeps in step with the library (comma- or "
        "os.pathsep-separated; empty: none).",
    )
    watch_grace_days: float = Field(
        default=30.0,
        ge=0,
        description="How long a document whose file left its watched folder is kept (hidden "
        "from search) before it is deleted.",
    )
    watch_debounce_ms: int = Field(
        default=1600, ge=50, description="Changes grouped over at most this long, in ms."
    )
    watch_stable_s: float = Field(
        default=2.0,
        ge=0,
        description="A file is read once its size and mtime held still this long (not "
        "half-written).",
    )
    watch_rescan_s: float = Field(
        default=300.0,
        gt=0,
        description="Full re-check of each watched folder at least this often, in seconds.",
    )

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, v: Path) -> Path:
        return v.expanduser().resolve()

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, v: SecretStr | None) -> SecretStr | None:
        url = v.get_secret_value().strip() if v is not None else ""
        if not url:
            return None
        scheme, sep, rest = url.partition("://")
        if not sep or scheme not in ("postgresql", "postgres", "postgresql+psycopg"):
            raise ValueError(
                "give a PostgreSQL URL, e.g. postgresql+psycopg://quire:secret@db:5432/quire "
                "(unset for the SQLite library under data_dir)"
            )
        return SecretStr("postgresql+psycopg://" + rest)

    @field_validator("llm_backends")
    @classmethod
    def _backends(cls, v: str) -> str:
        names = [n.strip().lower() for n in v.split(",") if n.strip()]
        if names in ([], ["none"]):
            return "none"
        unknown = sorted(set(names) - {"ollama", "openai"})
        if unknown or len(set(names)) != len(names):
            raise ValueError(
                f"{v!r}: list ollama and/or openai once each, in the order to try them, or none"
            )
        return ",".join(names)

    @field_validator("api_token")
    @classmethod
    def _token(cls, v: SecretStr | None) -> SecretStr | None:
        token = v.get_secret_value().strip() if v is not None else ""
        if not token:
            return None
        if len(token) < 16 or not all("!" <= c <= "~" for c in token):
            raise ValueError(
                "use at least 16 printable ASCII characters without spaces, e.g. "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        return SecretStr(token)

    @field_validator("embed_languages")
    @classmethod
    def _embed_languages(cls, v: str | None) -> str | None:
        tags = [t.strip() for t in (v or "").split(",") if t.strip()]
        if not tags:
            return None
        if [t.lower() for t in tags] == ["multilingual"]:
            return "multilingual"
        bad = [t for t in tags if not re.fullmatch(LANGUAGE_TAG, t)]
        if bad:
            raise ValueError(
                f"{', '.join(bad)}: give multilingual, or language tags such as en,ja,zh-Hant"
            )
        return ",".join(canonical_tag(t) for t in tags)

    @field_validator("ollama_url", "openai_url", "perplexity_url")
    @classmethod
    def _no_trailing_slash(cls, v: str) -> str:
        return v.strip().rstrip("/")

    @field_validator("perplexity_url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")) or "/" in v.split("://", 1)[1]:
            raise ValueError(f"{v!r}: give the site's origin, e.g. https://www.perplexity.ai")
        return v

    @field_validator("mcp_ingest_urls")
    @classmethod
    def _url_prefixes(cls, v: str) -> str:
        prefixes = [p.strip() for p in v.split(",") if p.strip()]
        for prefix in prefixes:
            scheme, _, rest = prefix.partition("://")
            host = rest.split("/", 1)[0]
            if scheme.lower() not in ("http", "https") or not host or "@" in host:
                raise ValueError(
                    f"{prefix!r}: give each allowed URL prefix with its scheme and host, "
                    "e.g. https://arxiv.org/pdf/"
                )
        return ",".join(prefixes)

    @property
    def db_path(self) -> Path:
        return self.data_dir / "quire.db"

    @property
    def vec_db_path(self) -> Path:
        return self.data_dir / "quire_vecs.db"

    @property
    def files_dir(self) -> Path:
        if self.originals_dir is not None:
            return self.originals_dir.expanduser().absolute()
        return self.data_dir / "files"

    @property
    def max_upload_bytes(self) -> int:
        return self.max_upload_mb * 1024 * 1024

    @property
    def cors_origin_list(self) -> list[str]:
        return [o.strip().rstrip("/") for o in self.cors_origins.split(",") if o.strip()]

    @property
    def mcp_ingest_dir_list(self) -> list[Path]:
        """``mcp_ingest_dirs`` as absolute, resolved folders."""
        return [
            Path(d.strip()).expanduser().resolve()
            for d in self.mcp_ingest_dirs.split(",")
            if d.strip()
        ]

    @property
    def watch_dir_list(self) -> list[Path]:
        """``watch_dirs`` as absolute folders (commas or os.pathsep between them)."""
        parts = self.watch_dirs.replace(os.pathsep, ",").split(",")
        return [Path(d.strip()).expanduser().absolute() for d in parts if d.strip()]

    @property
    def mcp_ingest_url_list(self) -> list[str]:
        return [u for u in self.mcp_ingest_urls.split(",") if u]

    @property
    def llm_backend_names(self) -> list[str]:
        """``llm_backends`` as a list (empty for none)."""
        return [] if self.llm_backends == "none" else self.llm_backends.split(",")
