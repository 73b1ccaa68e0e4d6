"""Finding a language model server on this machine, and the chat models it serves.

    servers = await find_servers(settings)     # every place looked at, in order
    [s for s in servers if s.ok]               # the ones that answered
    servers[0].models                          # chat models (embedding-only ones left out)

Where it looks: Ollama at the model picked before (llm/choice.py), at ``QUIRE_OLLAMA_URL``
and at Ollama's default ``http://127.0.0.1:11434``; an OpenAI-compatible server at the chosen
URL and at ``QUIRE_OPENAI_URL`` (``GET /v1/models``). Each is asked once, with a short timeout.

An Ollama model is left out of the chat models only when the server says it cannot chat
(``/api/show`` lists its capabilities without ``completion``) or, for servers too old to say,
when its family is an embedding architecture (``nomic-bert``, ``bert``); a model nothing is
known about stays in the list: hiding a chat model would be worse than showing an embedder.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import httpx

from quire.config import Settings
from quire.errors import Conflict, NotFound, OllamaNotRunning
from quire.llm.choice import Backend, Choice, read_choice, save_choice
from quire.ollama_api import error_text, tag_models

log = logging.getLogger(__name__)

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
#: How to get Ollama, per system (said when no server answers).
INSTALL_OLLAMA = {
    "linux": "curl -fsSL https://ollama.com/install.sh | sh",
    "macos": "brew install ollama && brew services start ollama",
    "windows": "winget install Ollama.Ollama",
}
#: Families of embedding-only models (Ollama's ``details.family``).
EMBEDDING_FAMILIES = frozenset({"bert", "nomic-bert", "jina-bert", "jina-bert-v2", "gte"})
LOOK_TIMEOUT_S = 3.0
#: ``/api/show`` calls at a time, when a server lists many models.
SHOW_AT_ONCE = 4


@dataclass(frozen=True)
class ChatModel:
    """A model a server can chat with."""

    name: str
    size: int | None = None  # bytes on disk
    parameter_size: str | None = None  # "3.2B", as Ollama says it
    family: str | None = None
    quantization: str | None = None


@dataclass
class Server:
    """One place looked at: whether a server answered there, and its chat models."""

    backend: Backend
    url: str
    ok: bool = False
    error: str | None = None  # plain words: why nothing usable is there
    version: str | None = None
    models: list[ChatModel] = field(default_factory=list)
    embedding_only: list[str] = field(default_factory=list)  # left out of ``models``

    @property
    def can_pull(self) -> bool:
        """Whether Quire can download models into it (Ollama's /api/pull)."""
        return self.backend == "ollama" and self.ok

    def has(self, name: str) -> ChatModel | None:
        """The model called ``name`` (``llama3.2`` is ``llama3.2:latest``)."""
        wanted = _bare(name)
        return next((m for m in self.models if _bare(m.name) == wanted), None)


def _bare(name: str) -> str:
    return name.removesuffix(":latest")


def places(settings: Settings) -> list[tuple[Backend, str]]:
    """Where to look, in order, without repeats."""
    seen: list[tuple[Backend, str]] = []
    chosen = read_choice(settings.data_dir)
    candidates: list[tuple[Backend, str]] = []
    if chosen is not None:
        candidates.append((chosen.backend, chosen.url))
    candidates += [("ollama", settings.ollama_url), ("ollama", DEFAULT_OLLAMA_URL)]
    if settings.openai_url:
        candidates.append(("openai", settings.openai_url))
    for backend, url in candidates:
        url = url.rstrip("/")
        if backend == "openai":
            url = url.removesuffix("/v1")
        if (backend, url) not in seen:
            seen.append((backend, url))
    return seen


async def find_servers(
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = LOOK_TIMEOUT_S,
) -> list[Server]:
    """Every place of ``places`` looked at (at once), in order."""
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
    async with httpx.AsyncClient(transport=transport, timeout=timeout_s) as client:
        return list(
            await asyncio.gather(
                *(
                    _ollama(client, url) if backend == "ollama" else _openai(client, url, key)
                    for backend, url in places(settings)
                )
            )
        )


async def find_server(
    settings: Settings, url: str | None = None, *, transport: httpx.AsyncBaseTransport | None = None
) -> Server | None:
    """The first server that answered (at ``url`` when given); None when none did."""
    servers = await find_servers(settings, transport=transport)
    return next((s for s in servers if s.ok and (url is None or s.url == url.rstrip("/"))), None)


async def _ollama(client: httpx.AsyncClient, url: str) -> Server:
    server = Server("ollama", url)
    try:
        response = await client.get(f"{url}/api/tags")
        if response.status_code != 200:
            server.error = f"answered HTTP {response.status_code}: {error_text(response)}"
            return server
        listed = tag_models(response.json())
    except httpx.HTTPError as e:
        log.info("no Ollama at %s: %s", url, e)
        server.error = "no Ollama answers there"
        return server
    except ValueError:
        server.error = "something answers there, but not Ollama (not an /api/tags list)"
        return server
    server.ok = True
    server.version = await _version(client, url)
    limit = asyncio.Semaphore(SHOW_AT_ONCE)

    async def capabilities(name: str) -> list[str] | None:
        async with limit:
            return await _capabilities(client, url, name)

    names = [str(m.get("name") or m.get("model") or "") for m in listed]
    caps = await asyncio.gather(*(capabilities(n) for n in names))
    for name, entry, can in zip(names, listed, caps, strict=True):
        raw = entry.get("details")
        details: dict[str, object] = raw if isinstance(raw, dict) else {}
        family = _str(details.get("family"))
        if not name:
            continue
        if _embedding_only(can, family):
            server.embedding_only.append(name)
            continue
        size = entry.get("size")
        server.models.append(
            ChatModel(
                name=name,
                size=size if isinstance(size, int) else None,
                parameter_size=_str(details.get("parameter_size")),
                family=family,
                quantization=_str(details.get("quantization_level")),
            )
        )
    return server


def _embedding_only(capabilities: list[str] | None, family: str | None) -> bool:
    if capabilities is not None:
        return "completion" not in capabilities
    return family is not None and family.lower() in EMBEDDING_FAMILIES


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


async def _version(client: httpx.AsyncClient, url: str) -> str | None:
    try:
        response = await client.get(f"{url}/api/version")
        version = response.json().get("version") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None


async def _capabilities(client: httpx.AsyncClient, url: str, name: str) -> list[str] | None:
    """What ``/api/show`` says the model can do; None when it does not say (older Ollama)."""
    try:
        response = await client.post(f"{url}/api/show", json={"model": name})
        caps = response.json().get("capabilities") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if isinstance(caps, list) and all(isinstance(c, str) for c in caps):
        return list(caps)
    return None


async def _openai(client: httpx.AsyncClient, url: str, key: str) -> Server:
    server = Server("openai", url)
    headers = {"Authorization": f"Bearer {key}"} if key else None
    try:
        response = await client.get(f"{url}/v1/models", headers=headers)
    except httpx.HTTPError as e:
        log.info("no OpenAI-compatible server at %s: %s", url, e)
        server.error = "no server answers there"
        return server
    if response.status_code in (401, 403):
        server.error = "the server refused the key: set QUIRE_OPENAI_API_KEY"
        return server
    try:
        data = response.json().get("data") if response.status_code == 200 else None
    except (ValueError, AttributeError):
        data = None
    if not isinstance(data, list):
        server.error = f"answered HTTP {response.status_code}, not a /v1/models list"
        return server
    server.ok = True
    for entry in data:
        name = str(entry.get("id") or "") if isinstance(entry, dict) else ""
        if not name:
            continue
        if "embed" in name.lower():  # text-embedding-3-small, nomic-embed-text …
            server.embedding_only.append(name)
        else:
            server.models.append(ChatModel(name=name))
    return server


async def pull_target(settings: Settings, url: str | None = None) -> Server:
    """The Ollama to pull into: the first found (at ``url`` when given); OllamaNotRunning."""
    server = await find_server(settings, url)
    if server is None or not server.can_pull:
        where = url or f"{settings.ollama_url} or {DEFAULT_OLLAMA_URL}"
        raise OllamaNotRunning(
            f"no Ollama answers at {where}: start it (`ollama serve`), or install it first",
            detail={"install": INSTALL_OLLAMA},
        )
    return server


async def choose(settings: Settings, name: str, url: str | None = None) -> Choice:
    """Make chat model ``name`` (on the first server that has it, or the one at ``url``) the
    one that writes answers: saved in ``<data_dir>/llm.json``, which the running service reads
    before its next answer. Conflict when the LLM is off, OllamaNotRunning, NotFound."""
    if not settings.llm_backend_names:
        raise Conflict("the LLM is switched off here (QUIRE_LLM_BACKENDS=none)")
    servers = [s for s in await find_servers(settings) if s.ok]
    if url is not None:
        servers = [s for s in servers if s.url == url.rstrip("/")]
    if not servers:
        raise OllamaNotRunning(
            "no language model server answers: start Ollama (`ollama serve`) first",
            detail={"install": INSTALL_OLLAMA},
        )
    for server in servers:
        if (model := server.has(name)) is not None:
            choice = Choice(backend=server.backend, url=server.url, model=model.name)
            await asyncio.to_thread(save_choice, settings.data_dir, choice)
            return choice
    first = servers[0]
    hint = f"pull it first (quire models pull {name})" if first.can_pull else "it serves others"
    raise NotFound(
        f"{first.url} has no chat model called {name!r}: {hint}",
        detail={"available": [m.name for s in servers for m in s.models]},
    )
