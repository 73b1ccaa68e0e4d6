"""A local web site on 127.0.0.1 for the link tests: the real saved pages, real PDFs and EPUBs,
and hostile answers (a body that never ends, 500 MB, a gzip bomb, redirect loops, a redirect
to a private address, wrong charsets, a page that needs JavaScript).

    site = Site().start()        # site.url("/pdf/dmca-summary.pdf")
    site.state["changing"] = b"..."  # what /changing serves
    site.sent["huge"]            # bytes /huge wrote before the client hung up
"""

from __future__ import annotations

import asyncio
import re
import threading
import zlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.conftest import DOCS
from tests.fakes.server import ThreadedServer

HTML_DIR = DOCS / "office" / "html"
HUGE = 500 * 1024 * 1024
BOMB_UNPACKED = 64 * 1024 * 1024
SPA = (
    b"""<!doctype html><html><head><title>App</title>
<script src="/static/js/main.3f9a1c.js"></script>
<script>window.__STATE__ = {"user": null, "flags": {"a": true}}; """
    + b"x" * 6000
    + b"""</script>
</head><body><noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div></body></html>"""
)
CAFE_WORDS = "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade"
CAFE_PAGE = (
    "<!doctype html><html><head><title>Caf\u00e9 cr\u00e8me</title></head><body><article>"
    "<h1>Caf\u00e9 cr\u00e8me</h1>"
    + "<p>{}: the caf\u00e9 on the corner serves cr\u00e8me br\u00fbl\u00e9e every day, and "
    "its na\u00efve fa\u00e7ade has not changed since the d\u00e9but of the century; the "
    "ma\u00eetre d\u2019h\u00f4tel greets each guest by name.</p>" * 4 + "</article></body></html>"
)


def _bomb() -> bytes:
    """64 MB of zeros gzipped (about 64 kB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1 << 20)
    return b"".join(packer.compress(block) for _ in range(BOMB_UNPACKED >> 20)) + packer.flush()


class Site:
    """The site's routes, with state a test may change (what /changing serves) and counters."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {
            "changing": (DOCS / "pdf" / "dmca-summary.pdf").read_bytes(),
            "page": (HTML_DIR / "readability-lwn-1.html").read_bytes(),
        }
        self.served = 0
        self.sent: dict[str, int] = {}
        self.hosts: list[str] = []
        #: /hold answers once ``release`` is set (at most 10 s later); ``held`` says it waits.
        self.held = threading.Event()
        self.release = threading.Event()
        self.bomb = _bomb()
        routes = [
            Route("/html/{name}", self.html),
            Route("/pdf/{name}", self.pdf),
            Route("/epub/{name}", self.epub),
            Route("/changing", self.changing),
            Route("/hops/{n:int}", self.hops),
            Route("/loop/{side}", self.loop),
            Route("/to-private", self.to_private),
            Route("/forever", self.forever),
            Route("/huge", self.huge),
            Route("/huge-declared", self.huge_declared),
            Route("/bomb", self.gzip_bomb),
            Route("/gzipped/{name}", self.gzipped),
            Route("/brotli", self.brotli),
            Route("/charset/{case}", self.charset),
            Route("/spa", self.spa),
            Route("/status/{code:int}", self.status),
            Route("/host", self.host),
            Route("/hold", self.hold),
            Route("/fresh/{name}", self.fresh),
            Route("/page", self.page),
        ]
        self.server = ThreadedServer(Starlette(routes=routes), name="link-site")

    def start(self) -> Site:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def url(self, path: str) -> str:
        return self.server.url + path

    async def html(self, request: Request) -> Response:
        data = (HTML_DIR / request.path_params["name"]).read_bytes()
        return Response(data, media_type="text/html; charset=utf-8")

    async def pdf(self, request: Request) -> Response:
        data = (DOCS / "pdf" / request.path_params["name"]).read_bytes()
        return Response(data, media_type="application/pdf")

    async def epub(self, request: Request) -> Response:
        data = (DOCS / "epub" / request.path_params["name"]).read_bytes()
        # Served with a generic type: the bytes, not the header, decide the reader.
        return Response(data, media_type="application/octet-stream")

    async def changing(self, request: Request) -> Response:
        return Response(self.state["changing"], media_type="application/pdf")

    async def hops(self, request: Request) -> Response:
        n = request.path_params["n"]
        if n == 0:
            return RedirectResponse("/pdf/dmca-summary.pdf", status_code=301)
        return RedirectResponse(f"/hops/{n - 1}", status_code=302)

    async def loop(self, request: Request) -> Response:
        other = "b" if request.path_params["side"] == "a" else "a"
        return RedirectResponse(self.url(f"/loop/{other}"), status_code=307)

    async def to_private(self, request: Request) -> Response:
        return RedirectResponse("http://169.254.169.254/latest/meta-data/", status_code=302)

    async def forever(self, request: Request) -> Response:
        async def drip() -> AsyncIterator[bytes]:
            yield b"<!doctype html><html><body><p>"
            for _ in range(100_000):  # bounded: 100,000 x 10 ms, far past any test's limit
                yield b"a "
                await asyncio.sleep(0.01)

        return StreamingResponse(drip(), media_type="text/html")

    async def huge(self, request: Request) -> Response:
        block = b"%PDF-1.4\n" + b"0" * ((1 << 16) - 9)
        self.sent["huge"] = 0

        async def body() -> AsyncIterator[bytes]:
            # uvicorn drops what is sent after the client left: stop then, so that the count
            # is what went out (up to a megabyte past the hang-up).
            for i in range(HUGE >> 16):
                if i % 16 == 0 and await request.is_disconnected():
                    return
                self.sent["huge"] += len(block)
                yield block
                await asyncio.sleep(0)  # let the loop see a hang-up (a closed socket never blocks)

        return StreamingResponse(body(), media_type="application/pdf")

    async def huge_declared(self, request: Request) -> Response:
        async def body() -> AsyncIterator[bytes]:
            yield b"%PDF-1.4\n"
            # The rest never comes: a client that trusts the header hangs up first.
            for _ in range(1000):
                if await request.is_disconnected():
                    return
                await asyncio.sleep(0.01)

        headers = {"content-length": str(HUGE)}
        return StreamingResponse(body(), media_type="application/pdf", headers=headers)

    async def gzip_bomb(self, request: Request) -> Response:
        headers = {"content-encoding": "gzip"}
        return Response(self.bomb, media_type="text/html", headers=headers)

    async def gzipped(self, request: Request) -> Response:
        data = (HTML_DIR / request.path_params["name"]).read_bytes()
        packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        body = packer.compress(data) + packer.flush()
        headers = {"content-encoding": "gzip"}
        return Response(body, media_type="text/html; charset=utf-8", headers=headers)

    async def brotli(self, request: Request) -> Response:
        headers = {"content-encoding": "br"}
        return Response(b"\x8b\x02\x80hi\x03", media_type="text/html", headers=headers)

    async def charset(self, request: Request) -> Response:
        case = request.path_params["case"]
        text = CAFE_PAGE.replace("{}", CAFE_WORDS)
        if case == "cp1252-says-utf8":
            return Response(text.encode("cp1252"), media_type="text/html; charset=utf-8")
        # UTF-8 bytes declared Latin-1 twice: by the header and by <meta>.
        data = text.replace("<head>", '<head><meta charset="iso-8859-1">').encode("utf-8")
        return Response(data, media_type="text/html; charset=iso-8859-1")

    async def spa(self, request: Request) -> Response:
        return Response(SPA, media_type="text/html")

    async def status(self, request: Request) -> Response:
        return Response(b"nope", status_code=request.path_params["code"])

    async def host(self, request: Request) -> Response:
        self.hosts.append(request.headers["host"])
        return Response(b"%PDF-1.4\nhost seen\n", media_type="application/pdf")

    async def hold(self, request: Request) -> Response:
        self.held.set()
        for _ in range(1000):
            if self.release.is_set():
                break
            await asyncio.sleep(0.01)
        return Response(
            (DOCS / "pdf" / "dmca-summary.pdf").read_bytes(), media_type="application/pdf"
        )

    async def fresh(self, request: Request) -> Response:
        """A saved page as a live site serves it: a new nonce and CSRF token each time."""
        self.served += 1
        data = (HTML_DIR / request.path_params["name"]).read_bytes()
        token = f"{self.served:08x}".encode()
        data = data.replace(
            b"</head>",
            b'<script nonce="' + token + b'">window.seen=' + token + b"</script></head>",
            1,
        )
        data = re.sub(
            rb"(<body\b[^>]*>)",
            rb'\1<input type="hidden" name="csrf" value="' + token + rb'">',
            data,
            count=1,
        )
        return Response(data, media_type="text/html; charset=utf-8")

    async def page(self, request: Request) -> Response:
        return Response(self.state["page"], media_type="text/html; charset=utf-8")
