"""A fake Ollama server speaking the real wire protocol over HTTP on 127.0.0.1.

    with FakeOllama(models=["nomic-embed-text:latest", "llama3.2:latest"], dim=768) as fake:
        client = OllamaEmbedder(fake.url, "nomic-embed-text")
        fake.fail_next(2, status=500)       # failure injection
        fake.latency_s = 0.2                # added to every request
        fake.requests_to("/api/embed")      # what the server received
        fake.responder = lambda messages, body: Reply("Hi.", token_delay_s=0.01)
        fake.cancelled_streams              # streams their client abandoned mid-way
        fake.registry = {"qwen2.5:3b"}      # what /api/pull can fetch (None: any name)
        fake.pull_steps, fake.pull_step_s = 8, 0.05
        fake.pull_cut_after = 3             # the server goes away after 3 progress lines

State lives on :class:`FakeOllama`; :func:`create_app` builds the ASGI app around it.
Implemented: ``GET /api/tags``, ``GET /api/version``, ``POST /api/show``, ``POST /api/embed``,
``POST /api/pull`` (streamed NDJSON progress as Ollama sends it; the model is listed, and can
chat, once it says ``success``), and (tests/fakes/chat.py) ``POST /api/chat``,
``POST /v1/chat/completions``, ``GET /v1/models``.
A chat model is a model like any other: one missing from ``/api/tags`` gets Ollama's 404 from
the chat routes. A prompt longer than the request's ``num_ctx`` (Ollama's default 4,096 when
none is sent) is cut as Ollama cuts it, silently, and counted in ``fake.truncated``, unless the
request says ``truncate: false``: then it is refused with Ollama's 400.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.fakes.chat import (
    CutConnection,
    Reply,
    Responder,
    add_chat_routes,
    echo,
    ollama_error,
    openai_error,
)
from tests.fakes.server import ThreadedServer

OLLAMA_VERSION = "0.12.3"


@dataclass(frozen=True)
class FakeOllamaModel:
    """One locally "pulled" model as ``/api/tags`` lists it."""

    name: str  # with tag, e.g. "nomic-embed-text:latest"
    family: str = "nomic-bert"
    parameter_size: str = "137M"
    quantization_level: str = "F16"
    size: int = 274_302_450
    dim: int | None = None  # embedding size; None means the server's default
    context_length: int = 2048  # what /api/show's model_info advertises

    @property
    def embeds(self) -> bool:
        """An embedding-only model, as /api/show's capabilities say."""
        return self.dim is not None or self.family in ("nomic-bert", "bert")

    @classmethod
    def named(cls, name: str) -> FakeOllamaModel:
        """A model by name: embedding-model details for ``*embed*``/``*minilm*``, else a chat
        model's (the details are only what /api/tags shows; any model can chat or embed)."""
        if any(k in name.lower() for k in ("embed", "minilm")):
            return cls(_tagged(name))
        return cls(_tagged(name), "llama", "3.2B", "Q4_K_M", 2_019_393_189, context_length=131_072)


@dataclass(frozen=True)
class RecordedRequest:
    """A request the fake received (recorded before any injected failure)."""

    method: str
    path: str
    body: Any  # parsed JSON, the raw text if it was not JSON, None if empty
    at: float = field(default_factory=time.monotonic)
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names


@dataclass(frozen=True)
class _Failure:
    status: int
    error: str
    path: str | None


def _tagged(name: str) -> str:
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


class FakeOllama:
    """State of a fake Ollama plus the uvicorn server (in a thread) that serves it."""

    def __init__(
        self,
        models: Iterable[str | FakeOllamaModel] = ("nomic-embed-text:latest",),
        *,
        dim: int = 768,
        latency_s: float = 0.0,
        normalize: bool = True,
        host: str = "127.0.0.1",
    ) -> None:
        self.models: list[FakeOllamaModel] = [
            m if isinstance(m, FakeOllamaModel) else FakeOllamaModel.named(m) for m in models
        ]
        self._started_with = list(self.models)  # what reset() goes back to
        self.dim = dim
        self.latency_s = latency_s
        self.normalize = normalize  # False: vectors of varied length, to test clients normalise
        self.host = host
        self.requests: list[RecordedRequest] = []
        self.responder: Responder = echo
        self.stream_outcomes: Counter[str] = Counter()  # completed, cancelled, error, cut
        self._streaming = 0  # chat streams being sent now (begun, not yet counted)
        self.truncated = 0  # chat prompts cut to fit num_ctx (what Ollama does without a word)
        # More fields of each /v1/models entry, as other servers list them (vLLM's
        # {"max_model_len": 32768}); Ollama's own has none.
        self.v1_model_fields: dict[str, Any] = {}
        # /api/pull: which names the "library" has (None: any), the progress lines of its
        # weights, the time between them, and a cut after that many lines (server gone).
        self.registry: set[str] | None = None
        self.pull_steps = 8
        self.pull_step_s = 0.05
        self.pull_cut_after: int | None = None
        self._failures: deque[_Failure] = deque()
        self._lock = threading.Lock()
        self.app = create_app(self)
        self._server: ThreadedServer | None = None

    # -- knobs ---------------------------------------------------------------------------
    def fail_next(
        self,
        n: int = 1,
        *,
        status: int = 500,
        error: str = "internal error",
        path: str | None = None,
    ) -> None:
        """Answer the next ``n`` requests (to ``path``, or to any path) with ``status``."""
        with self._lock:
            self._failures.extend(_Failure(status, error, path) for _ in range(n))

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The recorded requests whose path is ``path``."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def reset(self, settle_s: float = 15.0) -> None:
        """Forget recorded requests, pending failures, stream counts and pulled models; echo
        again. First waits (up to ``settle_s``) for the streams still being sent to end: a
        stream the last test abandoned is counted when the server notices, which on a busy
        machine can be after this reset, and would be counted as the next test's."""
        deadline = time.monotonic() + settle_s
        while self.streaming and time.monotonic() < deadline:
            time.sleep(0.01)
        with self._lock:
            self.models = list(self._started_with)
            self.requests.clear()
            self._failures.clear()
            self.stream_outcomes.clear()
            self.truncated = 0
            self.v1_model_fields = {}
            self.registry = None
            self.pull_steps, self.pull_step_s, self.pull_cut_after = 8, 0.05, None
        self.responder = echo

    @property
    def cancelled_streams(self) -> int:
        """Chat streams whose client went away before the end (closed or cancelled)."""
        with self._lock:
            return self.stream_outcomes["cancelled"]

    def find_model(self, name: str) -> FakeOllamaModel | None:
        """Resolve a model name as Ollama does (no tag means ``:latest``)."""
        wanted = _tagged(name)
        return next((m for m in self.models if m.name == wanted), None)

    def add_model(self, name: str) -> FakeOllamaModel:
        """Install ``name`` (what a successful pull does); the installed one if it is there."""
        with self._lock:
            found = self.find_model(name)
            if found is None:
                found = FakeOllamaModel.named(name)
                self.models.append(found)
            return found

    def vector(self, model: str, text: str) -> npt.NDArray[np.float32]:
        """The embedding this fake returns for ``text`` (deterministic, from a hash)."""
        found = self.find_model(model)
        dim = (found.dim if found else None) or self.dim
        digest = hashlib.sha256(f"{_tagged(model)}\0{text}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        v = rng.standard_normal(dim).astype(np.float32)
        v /= np.linalg.norm(v)
        if not self.normalize:
            v *= 1.0 + digest[8] % 7
        return v

    # -- called by the app ---------------------------------------------------------------
    def _record(self, method: str, path: str, raw: bytes, headers: dict[str, str]) -> None:
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode(errors="replace")
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body, headers=headers))

    async def reply(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> Reply:
        """What the responder answers to a chat request (a str becomes ``Reply(text)``)."""
        answer = self.responder(messages, body)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer if isinstance(answer, Reply) else Reply(str(answer))

    def count_truncated(self) -> None:
        with self._lock:
            self.truncated += 1

    @property
    def streaming(self) -> int:
        """Chat streams begun and not yet ended (their outcome not yet counted)."""
        with self._lock:
            return self._streaming

    def begin_stream(self) -> None:
        with self._lock:
            self._streaming += 1

    def count_stream(self, outcome: str, *, begun: bool = False) -> None:
        """Count how a stream ended; ``begun``: one :meth:`begin_stream` announced."""
        with self._lock:
            self.stream_outcomes[outcome] += 1
            if begun:
                self._streaming -= 1

    def _take_failure(self, path: str) -> _Failure | None:
        with self._lock:
            for i, f in enumerate(self._failures):
                if f.path is None or f.path == path:
                    del self._failures[i]
                    return f
        return None

    # -- server --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeOllama is not started")
        return self._server.url

    @property
    def port(self) -> int:
        return self._server.port if self._server is not None else 0

    def start(self) -> FakeOllama:
        """Serve on a free port in a background thread; returns once it accepts requests."""
        logging.getLogger("uvicorn.error").addFilter(_quiet_cuts)
        self._server = ThreadedServer(self.app, host=self.host, name="fake-ollama").start()
        return self

    def stop(self) -> None:
        """Shut the server down and wait for its thread."""
        if self._server is not None:
            self._server.stop()
        self._server = None
        logging.getLogger("uvicorn.error").removeFilter(_quiet_cuts)

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def _model_named(request: Request) -> str | Response:
    """The ``model`` (or older ``name``) of a request body, or Ollama's 400."""
    try:
        body = json.loads(await request.body())
    except ValueError:
        return ollama_error(400, "invalid character in request body")
    name = (body.get("model") or body.get("name")) if isinstance(body, dict) else None
    if not name or not isinstance(name, str):
        return ollama_error(400, "model is required")
    return name


async def _pull_lines(fake: FakeOllama, name: str) -> AsyncIterator[str]:
    """Ollama's pull progress: the manifest, the weights in ``pull_steps`` lines, two small
    layers, verification, success; or ``pull model manifest: file does not exist``."""

    def line(**part: Any) -> str:
        return json.dumps(part) + "\n"

    yield line(status="pulling manifest")
    await asyncio.sleep(fake.pull_step_s)
    known = (
        fake.registry is None
        or name in fake.registry
        or name.removesuffix(":latest") in (fake.registry)
    )
    if not known:
        yield line(error="pull model manifest: file does not exist")
        return
    model = FakeOllamaModel.named(name)
    weights = "sha256:" + hashlib.sha256(name.encode()).hexdigest()
    total = model.size
    for i in range(fake.pull_steps + 1):
        if fake.pull_cut_after is not None and i == fake.pull_cut_after:
            raise CutConnection("pull_cut_after")
        done = total * i // fake.pull_steps
        yield line(status=f"pulling {weights[7:19]}", digest=weights, total=total, completed=done)
        await asyncio.sleep(fake.pull_step_s)
    for small in ("template", "params"):
        digest = "sha256:" + hashlib.sha256(f"{name}/{small}".encode()).hexdigest()
        yield line(status=f"pulling {digest[7:19]}", digest=digest, total=96, completed=96)
    yield line(status="verifying sha256 digest")
    yield line(status="writing manifest")
    fake.add_model(name)
    yield line(status="success")


def unused_url(host: str = "127.0.0.1") -> str:
    """A URL on a port nothing listens on (bound, then released): for "server down" tests."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port = s.getsockname()[1]
    return f"http://{host}:{port}"


def _quiet_cuts(record: logging.LogRecord) -> bool:
    """Drop uvicorn's traceback for a connection cut on purpose (``Reply.cut_after``)."""
    exc = record.exc_info[1] if record.exc_info else None
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return not isinstance(exc, CutConnection)


class _Knobs:
    """ASGI middleware: record each request, then apply ``latency_s`` and ``fail_next``.

    Plain ASGI rather than ``@app.middleware``: a streamed chat reply must see its client's
    disconnect (BaseHTTPMiddleware sits between the two).
    """

    def __init__(self, app: ASGIApp, fake: FakeOllama) -> None:
        self.app = app
        self.fake = fake

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        path: str = scope["path"]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        self.fake._record(scope["method"], path, raw, headers)
        if self.fake.latency_s:
            await asyncio.sleep(self.fake.latency_s)
        failure = self.fake._take_failure(path)
        if failure is not None:
            error = openai_error if path.startswith("/v1/") else ollama_error
            await error(failure.status, failure.error)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def create_app(fake: FakeOllama) -> FastAPI:
    """The ASGI app of ``fake``: Ollama's routes plus recording, latency and failure knobs."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.add_middleware(_Knobs, fake=fake)
    add_chat_routes(app, fake)

    @app.get("/api/version")
    async def version() -> dict[str, str]:
        return {"version": OLLAMA_VERSION}

    @app.get("/api/tags")
    async def tags() -> dict[str, Any]:
        return {
            "models": [
                {
                    "name": m.name,
                    "model": m.name,
                    "modified_at": "2025-01-15T10:20:30.123456789Z",
                    "size": m.size,
                    "digest": hashlib.sha256(m.name.encode()).hexdigest(),
                    "details": {
                        "parent_model": "",
                        "format": "gguf",
                        "family": m.family,
                        "families": [m.family],
                        "parameter_size": m.parameter_size,
                        "quantization_level": m.quantization_level,
                    },
                }
                for m in fake.models
            ]
        }

    @app.post("/api/show")
    async def show(request: Request) -> Response:
        name = await _model_named(request)
        if isinstance(name, Response):
            return name
        found = fake.find_model(name)
        if found is None:
            return ollama_error(404, f"model '{name}' not found")
        arch = found.family  # "llama", "nomic-bert": Ollama's general.architecture
        return JSONResponse(
            {
                "modelfile": f'# Modelfile generated by "ollama show"\nFROM {found.name}\n',
                "parameters": 'stop "<|eot_id|>"',
                "template": "{{ .Prompt }}",
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": found.family,
                    "families": [found.family],
                    "parameter_size": found.parameter_size,
                    "quantization_level": found.quantization_level,
                },
                "model_info": {
                    "general.architecture": arch,
                    "general.parameter_count": 3_212_749_888,
                    f"{arch}.context_length": found.context_length,
                    f"{arch}.embedding_length": found.dim or fake.dim,
                },
                "capabilities": ["embedding"] if found.embeds else ["completion"],
                "modified_at": "2025-01-15T10:20:30.123456789Z",
            }
        )

    @app.post("/api/pull")
    async def pull(request: Request) -> Response:
        name = await _model_named(request)
        if isinstance(name, Response):
            return name
        lines = _pull_lines(fake, _tagged(name))
        return StreamingResponse(lines, media_type="application/x-ndjson")

    @app.post("/api/embed")
    async def embed(request: Request) -> Response:
        started = time.perf_counter_ns()
        try:
            body = json.loads(await request.body())
        except ValueError:
            return ollama_error(400, "invalid character in request body")
        if not isinstance(body, dict):
            return ollama_error(400, "invalid request body")
        name = body.get("model")
        if not name or not isinstance(name, str):
            return ollama_error(400, "model is required")
        if fake.find_model(name) is None:
            return ollama_error(404, f'model "{name}" not found, try pulling it first')
        inputs = body.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return ollama_error(400, "invalid input type")
        vectors = [fake.vector(name, t).tolist() for t in inputs]
        took = time.perf_counter_ns() - started
        return JSONResponse(
            {
                "model": name,
                "embeddings": vectors,
                "total_duration": took + 1_000_000,
                "load_duration": 1_000_000,
                "prompt_eval_count": sum(len(t.split()) + 2 for t in inputs),
            }
        )

    return app
