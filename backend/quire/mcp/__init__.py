"""Quire as a Model Context Protocol server, for assistants (Claude Desktop, Claude Code,
Cursor, VS Code, ...) to search and cite the library.

server.py    the tools (search, ask, get_page, list_documents, ingest) and resources
library.py   the reads behind them        answers.py  ask, with progress and cancellation
intake.py    ingest (off by default)      citations.py  citation strings, resource URIs, links
models.py    what each tool returns       http.py     Streamable HTTP at /mcp inside the API
clients.py   configuration blocks for the assistants (`quire mcp --print-config`)

Over stdio ``quire mcp`` (cli/mcp.py) opens its own Runtime; over HTTP the API's is used.
"""
