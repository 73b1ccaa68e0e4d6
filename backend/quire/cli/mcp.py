"""``quire mcp``: the library as an MCP server over stdio (what a desktop assistant launches),
and ``--print-config CLIENT``: the block that sets an assistant up, with this machine's paths."""

from __future__ import annotations

import asyncio
import contextlib

import click

from quire.cli.common import err_console, settings
from quire.config import Settings
from quire.mcp import clients
from quire.mcp.server import build_server
from quire.runtime import Runtime


@click.command("mcp")
@click.option(
    "--print-config",
    "client",
    type=click.Choice(clients.CLIENTS),
    help="Print the configuration for this assistant instead of serving.",
)
@click.option(
    "--http",
    "over_http",
    is_flag=True,
    help="With --print-config: reach the running API's /mcp instead of launching quire mcp.",
)
@click.option(
    "--url",
    default=None,
    help="With --print-config: this /mcp URL (implies --http; default: make run's, "
    "http://$QUIRE_WEB_LISTEN/mcp).",
)
def mcp(client: clients.Client | None, over_http: bool, url: str | None) -> None:
    """Serve the library over MCP on stdin/stdout (logs on stderr)."""
    if client is None:
        if over_http or url:
            raise click.UsageError("--http and --url go with --print-config CLIENT")
        config = settings()  # logging goes to stderr: stdout is the protocol's
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(config))
        return
    config = settings(logs=False)
    if over_http or url:
        token = config.api_token.get_secret_value() if config.api_token else None
        click.echo(clients.http_config(client, url or clients.default_url(), token))
        if token is None:
            err_console.print(
                "QUIRE_API_TOKEN is not set here: the block sends no Authorization header "
                "(add `Authorization: Bearer <token>` if the server has one)."
            )
    else:
        click.echo(clients.stdio_config(client, clients.Launch.here(config)))
    err_console.print(f"Where: {clients.WHERE[client]}", highlight=False)


async def _serve(config: Settings) -> None:
    async with Runtime.open(config) as rt:
        await build_server(rt).run_stdio_async()
