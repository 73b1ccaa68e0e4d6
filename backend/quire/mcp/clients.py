"""The configuration each assistant needs to reach Quire's MCP server, over stdio (it launches
``quire mcp``) or over HTTP (the running API's /mcp): what ``quire mcp --print-config`` prints
and docs/mcp.md shows.

    print(stdio_config("cursor", Launch.here(settings)))
    print(http_config("vscode", "http://127.0.0.1:8080/mcp", token))
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from quire.config import Settings

Client = Literal["claude-desktop", "claude-code", "cursor", "vscode"]
CLIENTS: tuple[Client, ...] = get_args(Client)
NAME = "quire"  # the server's name in every client's configuration
#: Where each client reads the block (shown on stderr by `quire mcp --print-config`).
WHERE: dict[Client, str] = {
    "claude-desktop": "claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, "
    "Windows: %APPDATA%\\Claude\\, Linux: ~/.config/Claude/); restart Claude Desktop",
    "claude-code": "run it in a shell (--scope user: every project; project: .mcp.json)",
    "cursor": "~/.cursor/mcp.json (every project) or .cursor/mcp.json (this project)",
    "vscode": ".vscode/mcp.json (this workspace) or the user mcp.json (MCP: Open User "
    "Configuration)",
}
# Settings that are secrets stay out of a block that may end up in a repository.
_SECRET = {"QUIRE_API_TOKEN", "QUIRE_OPENAI_API_KEY"}


@dataclass(frozen=True)
class Launch:
    """How a client starts ``quire mcp`` here: this environment's executable and settings."""

    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def here(cls, settings: Settings, environ: dict[str, str] | None = None) -> Launch:
        """This interpreter's ``quire`` (a venv's bin/, not resolved: that would leave the
        venv), the data directory, and the other QUIRE_ variables set now (secrets aside)."""
        environ = dict(os.environ) if environ is None else environ
        bin_dir = Path(sys.executable).absolute().parent
        script = bin_dir / ("quire.exe" if os.name == "nt" else "quire")
        command, args = (
            (str(script), ["mcp"])
            if script.exists()
            else (str(Path(sys.executable).absolute()), ["-m", "quire", "mcp"])
        )
        env = {"QUIRE_DATA_DIR": str(settings.data_dir)}
        for key in sorted(environ):
            if key.startswith("QUIRE_") and key not in _SECRET and key not in env:
                env[key] = environ[key]
        return cls(command, args, env)


def default_url(environ: dict[str, str] | None = None) -> str:
    """/mcp behind `make run`'s nginx (QUIRE_WEB_LISTEN, default 127.0.0.1:8080)."""
    environ = dict(os.environ) if environ is None else environ
    return f"http://{environ.get('QUIRE_WEB_LISTEN', '127.0.0.1:8080')}/mcp"


def stdio_config(client: Client, launch: Launch) -> str:
    """The block (a shell command for Claude Code) that launches ``quire mcp`` over stdio."""
    entry: dict[str, Any] = {"command": launch.command, "args": launch.args, "env": launch.env}
    if client == "claude-code":
        envs = [f"--env {shlex.quote(f'{k}={v}')}" for k, v in launch.env.items()]
        words = [launch.command, *launch.args]
        return " ".join(
            [
                "claude mcp add --transport stdio --scope user",
                *envs,
                NAME,
                "--",
                *map(shlex.quote, words),
            ]
        )
    if client == "vscode":
        return _json({"servers": {NAME: {"type": "stdio", **entry}}})
    return _json({"mcpServers": {NAME: entry}})


def http_config(client: Client, url: str, token: str | None) -> str:
    """The block that reaches the API's /mcp at ``url`` with the bearer ``token`` (if any)."""
    bearer = f"Bearer {token}" if token else None
    if client == "claude-code":
        header = f" --header {shlex.quote(f'Authorization: {bearer}')}" if bearer else ""
        return f"claude mcp add --transport http --scope user{header} {NAME} {shlex.quote(url)}"
    if client == "vscode":
        if not token:
            return _json({"servers": {NAME: {"type": "http", "url": url}}})
        # VS Code asks for the token once and keeps it in its secret storage, not in the file.
        return _json(
            {
                "servers": {
                    NAME: {
                        "type": "http",
                        "url": url,
                        "headers": {"Authorization": "Bearer ${input:quire-token}"},
                    }
                },
                "inputs": [
                    {
                        "type": "promptString",
                        "id": "quire-token",
                        "description": "Quire API token (QUIRE_API_TOKEN)",
                        "password": True,
                    }
                ],
            }
        )
    if client == "cursor":
        entry: dict[str, Any] = {"url": url}
        if bearer:
            entry["headers"] = {"Authorization": bearer}
        return _json({"mcpServers": {NAME: entry}})
    # Claude Desktop's file launches local servers only: mcp-remote (Node) bridges to HTTP.
    args = ["-y", "mcp-remote", url]
    if urlsplit(url).scheme == "http" and urlsplit(url).hostname not in ("127.0.0.1", "localhost"):
        args.append("--allow-http")
    desktop: dict[str, Any] = {"command": "npx", "args": args}
    if bearer:
        # The header goes through an environment variable: Windows splits arguments on spaces.
        args += ["--header", "Authorization:${QUIRE_AUTH}"]
        desktop["env"] = {"QUIRE_AUTH": bearer}
    return _json({"mcpServers": {NAME: desktop}})


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
