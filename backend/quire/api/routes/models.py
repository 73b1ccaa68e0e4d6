"""Models: the language model servers found on this machine, their chat models, the one
recommended for its memory; pulling one into Ollama (progress as Server-Sent Events) and
choosing the one that writes answers (docs/using/models.md).

    GET    /api/models          servers, chat models, recommendation, the model in use
    POST   /api/models/pull     {"name": "llama3.2:3b"} -> progress events, then done or error
    POST   /api/models/reranker/pull   the cross-encoder from the Hugging Face Hub -> progress
                                events, then done (search reranks with it now) or error
    PUT    /api/models/use      {"name": "llama3.2:3b"} -> the next answer is written by it
    DELETE /api/models/use      back to the configured model (QUIRE_OLLAMA_CHAT_MODEL …)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.sse import ServerSentEvent
from pydantic import BaseModel, Field

from quire.api.deps import AdminOnly, RuntimeDep, SettingsDep
from quire.api.reranker_pull import RerankerPullEvent, RerankerPulls
from quire.api.schemas import error_responses, stream_error_responses
from quire.api.sse import EventStream
from quire.errors import Conflict, QuireError
from quire.llm.base import backend_label
from quire.llm.choice import clear_choice, read_choice
from quire.llm.discover import INSTALL_OLLAMA, Server, choose, find_servers, pull_target
from quire.llm.pull import Tally, check_name, pull_ollama
from quire.llm.recommend import memory_bytes, recommend
from quire.retrieval.rerank import find_model_file, resolve_model_dir

router = APIRouter(prefix="/api/models", tags=["models"])


class ChatModelOut(BaseModel):
    name: str
    size: int | None = Field(default=None, description="Bytes on disk.")
    parameter_size: str | None = Field(default=None, description='e.g. "3.2B".')
    family: str | None = None
    quantization: str | None = None
    in_use: bool = Field(default=False, description="The model that writes answers now.")


class ServerOut(BaseModel):
    backend: Literal["ollama", "openai"]
    url: str
    ok: bool = Field(description="A server answered there.")
    error: str | None = Field(default=None, description="Why nothing usable is there.")
    version: str | None = None
    can_pull: bool = Field(description="Models can be pulled into it (Ollama).")
    models: list[ChatModelOut] = Field(description="Its chat models.")
    embedding_only: list[str] = Field(description="Models left out: they cannot chat.")


class RecommendationOut(BaseModel):
    name: str
    reason: str = Field(description="Why, in one line.")
    installed: bool
    memory_bytes: int
    download: str | None = Field(default=None, description="Its download size, if not installed.")


class RerankerOut(BaseModel):
    installed: bool
    loaded: bool = Field(description="Search uses it now.")
    pulling: bool = Field(description="A download started here is running.")
    path: str
    command: str = Field(description="The command that downloads it (or POST …/reranker/pull).")


class ChoiceOut(BaseModel):
    backend: Literal["ollama", "openai"]
    url: str
    model: str


class ModelsOut(BaseModel):
    servers: list[ServerOut] = Field(description="Every place looked at, in order.")
    recommendation: RecommendationOut
    in_use: str | None = Field(description='The model answers go to first ("ollama:llama3.2").')
    choice: ChoiceOut | None = Field(description="The model picked in Settings, if any.")
    llm_enabled: bool = Field(description="False: QUIRE_LLM_BACKENDS=none switches the LLM off.")
    install: dict[str, str] = Field(description="How to install Ollama: linux, macos, windows.")
    reranker: RerankerOut


class PullIn(BaseModel):
    name: str = Field(min_length=1, max_length=200, description='e.g. "llama3.2:3b".')
    url: str | None = Field(default=None, description="The Ollama to pull into (default: found).")


class PullProgress(BaseModel):
    status: str = Field(description="Ollama's words: pulling manifest, pulling <digest> …")
    completed: int = Field(description="Bytes down, over the layers seen so far.")
    total: int = Field(description="Bytes of the layers seen so far.")
    fraction: float | None = Field(description="completed / total, null before any size.")


class PullDone(BaseModel):
    name: str
    url: str


class UseIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    url: str | None = Field(default=None, description="The server (default: the first found).")


def _in_use(runtime: RuntimeDep) -> str | None:
    router_ = runtime.router
    return backend_label(router_.backends[0]) if router_ is not None else None


def _server_out(server: Server, in_use: str | None) -> ServerOut:
    def used(name: str) -> bool:
        return in_use == f"{server.backend}:{name.removesuffix(':latest')}"

    out = {**asdict(server), "can_pull": server.can_pull}
    out["models"] = [{**m, "in_use": used(m["name"])} for m in out["models"]]
    return ServerOut.model_validate(out)


def _pulls(request: Request) -> RerankerPulls:
    pulls: RerankerPulls = request.app.state.reranker_pulls
    return pulls


@router.get("", response_model=ModelsOut, summary="Language model servers and chat models")
async def list_models(request: Request, runtime: RuntimeDep, settings: SettingsDep) -> ModelsOut:
    """Where Quire looked for a model server, the chat models of each that answered, the model
    recommended for this machine's memory, and the one in use."""
    runtime.sync_llm()
    servers = await find_servers(settings)
    found = next((s for s in servers if s.ok), None)
    pick = recommend(memory_bytes(), found.models if found else (), found.url if found else None)
    in_use = _in_use(runtime)
    choice = read_choice(settings.data_dir)
    reranker_dir = resolve_model_dir(settings)
    return ModelsOut(
        servers=[_server_out(s, in_use) for s in servers],
        recommendation=RecommendationOut(**vars(pick)),
        in_use=in_use,
        choice=ChoiceOut(**choice.model_dump()) if choice else None,
        llm_enabled=bool(settings.llm_backend_names),
        install=INSTALL_OLLAMA,
        reranker=RerankerOut(
            installed=find_model_file(reranker_dir) is not None,
            loaded=runtime.reranker is not None,
            pulling=_pulls(request).running,
            path=str(reranker_dir),
            command="quire models pull reranker",
        ),
    )


@router.post(
    "/pull",
    response_class=EventStream,
    dependencies=[AdminOnly],
    responses={
        200: {"model": PullProgress, "description": "`progress` events, then `done` or `error`."},
        **stream_error_responses(
            {
                400: "Not a model name",
                403: "Not an admin",
                409: "The LLM is switched off (QUIRE_LLM_BACKENDS=none)",
                503: "No Ollama is running",
            }
        ),
    },
)
async def pull_model(body: PullIn, runtime: RuntimeDep, settings: SettingsDep) -> EventStream:
    """Pull a model into Ollama: `progress` events (bytes over the layers seen), then `done`,
    or `error` (an unknown name, the server gone mid-pull) with the error shape."""
    name = check_name(body.name)
    if not settings.llm_backend_names:
        raise Conflict(
            "the LLM is switched off here (QUIRE_LLM_BACKENDS=none): nothing would use it"
        )
    server = await pull_target(settings, body.url)

    async def events() -> AsyncIterator[ServerSentEvent]:
        tally = Tally()
        try:
            async for step in pull_ollama(server.url, name):
                completed, total = tally.add(step)
                if step.done:
                    # The configured model may be the one just pulled: forget that it was not.
                    runtime.sync_llm(force=True)
                    yield ServerSentEvent(event="done", data=PullDone(name=name, url=server.url))
                    return
                progress = PullProgress(
                    status=step.status,
                    completed=completed,
                    total=total,
                    fraction=completed / total if total else None,
                )
                yield ServerSentEvent(event="progress", data=progress)
        except QuireError as e:
            yield ServerSentEvent(event="error", data=e.body())

    return EventStream(events())


@router.post(
    "/reranker/pull",
    response_class=EventStream,
    dependencies=[AdminOnly],
    responses={
        200: {
            "model": RerankerPullEvent,
            "description": "`progress` events (one per step), then `done` or `error`.",
        },
        **stream_error_responses({403: "Not an admin", 409: "A download is running already"}),
    },
)
async def pull_reranker(request: Request, runtime: RuntimeDep) -> EventStream:
    """Download the cross-encoder (`QUIRE_RERANK_REPO`) from the Hugging Face Hub as `quire
    models pull reranker` does: `progress` events (bytes of each download, then the conversion
    and the check), then `done`, from when search reranks with it (no restart), or `error`
    (hub unreachable, no such repo, disk full …: nothing is installed). It runs to its end
    even if the client leaves."""
    return EventStream(_pulls(request).start(runtime))


@router.put(
    "/use",
    response_model=ChoiceOut,
    dependencies=[AdminOnly],
    responses=error_responses(403, 404, 409, 503),
)
async def use_model(body: UseIn, runtime: RuntimeDep, settings: SettingsDep) -> ChoiceOut:
    """Answer with this model from the next question on (no restart); kept across restarts in
    `<data_dir>/llm.json`. 404 when the server does not have it (pull it first)."""
    choice = await choose(settings, body.name, body.url)
    runtime.sync_llm(force=True)
    return ChoiceOut(**choice.model_dump())


@router.delete("/use", status_code=204, dependencies=[AdminOnly], responses=error_responses(403))
async def forget_model(runtime: RuntimeDep, settings: SettingsDep) -> None:
    """Forget the model picked here: the configured one (QUIRE_OLLAMA_CHAT_MODEL …) answers."""
    await asyncio.to_thread(clear_choice, settings.data_dir)
    runtime.sync_llm(force=True)
