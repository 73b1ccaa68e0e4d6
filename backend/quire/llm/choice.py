"""The chat model picked in Settings (or with ``quire models use``), kept in the data directory.

    save_choice(settings.data_dir, Choice(backend="ollama", url=url, model="qwen2.5:3b"))
    routed(settings)          # the settings with the choice applied: what make_router reads
    read_choice(data_dir)     # None when nothing was picked

One small JSON file, ``<data_dir>/llm.json``, rather than a table: the choice belongs to the
machine the API runs on (its Ollama), not to the library, and every process that opens a
router (the API, ``quire ask``, the MCP server, ``quire doctor``) reads it when it does. It
wins over ``QUIRE_OLLAMA_CHAT_MODEL`` / ``QUIRE_OPENAI_MODEL`` and the URL settings because it
is the later decision; ``quire models use --reset`` deletes it, and the environment rules again.
The chosen backend is tried first, the others after it, in their configured order.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from quire.config import Settings

log = logging.getLogger(__name__)

CHOICE_FILE = "llm.json"
Backend = Literal["ollama", "openai"]


class Choice(BaseModel):
    """A chat model on one server."""

    backend: Backend = Field(description="ollama or openai (an OpenAI-compatible server).")
    url: str = Field(description="The server's base URL.")
    model: str = Field(min_length=1, description="The model's name, as the server lists it.")


def choice_path(data_dir: Path) -> Path:
    return data_dir / CHOICE_FILE


def read_choice(data_dir: Path) -> Choice | None:
    """The saved choice; None when there is none, or it cannot be read (logged)."""
    path = choice_path(data_dir)
    try:
        return Choice.model_validate(json.loads(path.read_text("utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, ValidationError) as e:
        log.warning("%s cannot be read, the configured model is used: %s", path, e)
        return None


def save_choice(data_dir: Path, choice: Choice) -> None:
    """Write the choice in one rename, so that no reader sees half a file."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=data_dir, prefix=".llm-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(choice.model_dump_json(indent=2) + "\n")
    os.replace(tmp, choice_path(data_dir))


def clear_choice(data_dir: Path) -> bool:
    """Forget the choice; False when there was none."""
    try:
        choice_path(data_dir).unlink()
    except FileNotFoundError:
        return False
    return True


def stamp(data_dir: Path) -> tuple[int, int] | None:
    """What changes when the choice file does (modification time, size); None without one."""
    try:
        st = choice_path(data_dir).stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def routed(settings: Settings, choice: Choice | None = None) -> Settings:
    """``settings`` with the saved choice (or ``choice``) applied: its model and URL, its
    backend first. QUIRE_LLM_BACKENDS=none stays none."""
    choice = choice or read_choice(settings.data_dir)
    if choice is None or not settings.llm_backend_names:
        return settings
    order = [choice.backend, *(n for n in settings.llm_backend_names if n != choice.backend)]
    update: dict[str, object] = {"llm_backends": ",".join(order)}
    if choice.backend == "ollama":
        update |= {"ollama_url": choice.url, "ollama_chat_model": choice.model}
    else:
        update |= {"openai_url": choice.url, "openai_model": choice.model}
    return settings.model_copy(update=update)
