"""Fetching a link on the server, safely: the page or file behind an http(s) address, streamed
into a file under a size, unpacked-size and time limit.

    with Fetcher(settings) as fetcher:
        fetched = fetcher.fetch("https://example.org/paper.pdf", out)   # out: a binary file
    fetched.url, fetched.media_type, fetched.size

Safe by default (server-side request forgery): only http and https; the host name is resolved
here, every address it resolves to is checked, and a name with any loopback, private,
link-local, multicast, reserved, unspecified or shared (CGNAT) address is refused, an IPv6
form embedding such an IPv4 address included, unless ``QUIRE_FETCH_ALLOW_HOSTS`` names the
host, the address or its network. The connection goes to the address that was checked (the
check lives in httpcore's network backend, under the TLS layer, so SNI and the certificate
check keep the name and no second DNS answer can swap the address: DNS rebinding). Redirects
are followed here, at most ``MAX_REDIRECTS``, each hop checked the same way, loops refused.
Bodies are unpacked here (gzip, deflate; nothing else is asked for) in bounded steps, so a
small compressed bomb stops at the limit too. Nothing is run: the bytes are stored and read.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any
from urllib.parse import unquote

import httpcore
import httpx

from quire import __version__
from quire.config import Settings
from quire.errors import FetchFailed, FetchRefused, FileTooLarge, InputError

log = logging.getLogger(__name__)

MAX_REDIRECTS = 5
#: Bytes unpacked per step: a compressed bomb never fills memory beyond this at once.
STEP = 1 << 16
USER_AGENT = f"Quire/{__version__} (self-hosted research library; fetches links it is given)"
ACCEPT = (
    "text/html,application/xhtml+xml,application/pdf,application/epub+zip,"
    "application/xml;q=0.9,*/*;q=0.8"
)
_REDIRECTS = (301, 302, 303, 307, 308)
#: NAT64's well-known prefix: the IPv4 address a gateway reaches is its last 32 bits.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_-]+)*")

#: ``(host, port)`` -> the addresses the name resolves to; tests pass their own.
Resolver = Callable[[str, int], list[str]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for ``host`` (IPv4 and IPv6), each once."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped ::ffff:a.b.c.d, 6to4, Teredo, NAT64)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def why_not_public(ip: IPAddress) -> str | None:
    """What kind of non-public address ``ip`` is ("loopback", "private" …); None if public."""
    inner = _embedded_ipv4(ip)
    if inner is not None:
        why = why_not_public(inner)
        return f"{why} (inside the IPv6 address {ip})" if why else None
    checks = (
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT, "shared (carrier-grade NAT)"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
        (not ip.is_global, "non-public"),
    )
    return next((why for hit, why in checks if hit), None)


class AddressGuard:
    """Resolves a host and refuses it unless every address is public or allowed."""

    def __init__(self, allow: Iterable[str] = (), resolver: Resolver = system_resolver) -> None:
        self.names: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in (e.strip().lower().rstrip(".") for e in allow if e.strip()):
            try:
                self.networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                if not _HOST_NAME.fullmatch(entry):
                    raise InputError(
                        f"QUIRE_FETCH_ALLOW_HOSTS: {entry!r} is no host name, address or "
                        "network; give e.g. wiki.intranet,127.0.0.1,10.0.0.0/8 (no scheme, port "
                        "or path)"
                    ) from None
                self.names.add(entry)
        self.resolver = resolver

    def _allowed(self, ip: IPAddress) -> bool:
        return any(ip in net for net in self.networks)

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for ``host``; FetchRefused if any is not allowed."""
        name = host.lower().rstrip(".").strip("[]")
        try:
            found = self.resolver(name, port)
        except (OSError, UnicodeError) as exc:
            raise FetchFailed(f"{name}: no such host ({exc})") from exc
        if not found:
            raise FetchFailed(f"{name}: no such host (it resolves to no address)")
        if name in self.names:
            return found
        for text in found:
            ip = ipaddress.ip_address(text.split("%", 1)[0])
            why = why_not_public(ip)
            if why and not self._allowed(ip):
                where = name if name == str(ip) else f"{name} resolves to {ip}, which"
                raise FetchRefused(
                    f"{where} is a {why} address: Quire fetches links on public addresses "
                    "only (QUIRE_FETCH_ALLOW_HOSTS may name a host or network to allow)",
                    detail={"host": name, "address": str(ip), "reason": why},
                )
        return found


class _GuardedBackend(httpcore.SyncBackend):
    """httpcore's sockets, opened only to addresses the guard passed (the check and the
    connection use one resolution)."""

    def __init__(self, guard: AddressGuard) -> None:
        self.guard = guard

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        last: Exception | None = None
        for address in self.guard.addresses(host, port):
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as exc:  # try the name's next address
                last = exc
        assert last is not None
        raise last

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise FetchRefused("links are fetched over TCP only")


def _transport(guard: AddressGuard) -> httpx.HTTPTransport:
    """httpx's transport over the guarded backend (no proxy from the environment: a proxy
    would make the connection, and the check, somewhere else)."""
    transport = httpx.HTTPTransport(trust_env=False, retries=0)
    # httpx builds the pool without a way to name its network backend; the pool is replaced
    # with the same one over ours (tests/web/test_fetch.py proves every connection is checked).
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=10,
        max_keepalive_connections=5,
        keepalive_expiry=5.0,
        http1=True,
        http2=False,
        retries=0,
        network_backend=_GuardedBackend(guard),
    )
    return transport


@dataclass(frozen=True)
class Fetched:
    """What a fetch stored: the final address (after redirects), its type and size."""

    url: str
    requested: str
    media_type: str
    charset: str | None
    size: int
    filename: str
    redirects: list[str]


class _Unpacker:
    """A Content-Encoding undone in steps of at most STEP bytes (gzip, deflate, identity)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._zlib: Any = None
        if encoding == "gzip":
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
        self._first = True

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._zlib is None:
            yield data
            return
        while data:
            try:
                out = self._zlib.decompress(data, STEP)
            except zlib.error:
                if not (self.encoding == "deflate" and self._first):
                    raise
                # "deflate" is sent as raw DEFLATE as often as zlib-wrapped.
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                out = self._zlib.decompress(data, STEP)
            self._first = False
            data = self._zlib.unconsumed_tail
            if out:
                yield out
            if self._zlib.eof:
                return

    def finish(self) -> bytes:
        return self._zlib.flush(STEP) if self._zlib is not None else b""


def _encoding(headers: httpx.Headers, url: str) -> str:
    layers = [e.strip().lower() for e in headers.get("content-encoding", "").split(",")]
    layers = [e for e in layers if e and e != "identity"]
    if not layers:
        return "identity"
    if len(layers) == 1 and layers[0] in ("gzip", "x-gzip", "deflate"):
        return "gzip" if layers[0] == "x-gzip" else layers[0]
    raise FetchFailed(
        f"{url}: the server sent the body as {', '.join(layers)}, which Quire did not ask "
        "for (it accepts gzip and deflate)"
    )


def _filename(url: httpx.URL, disposition: str | None) -> str:
    """The name a server gives the file, else the last part of its path, else the host."""
    if disposition:
        m = re.search(r"filename\*\s*=\s*[\w-]*'[^']*'([^;]+)", disposition) or re.search(
            r'filename\s*=\s*"?([^";]+)"?', disposition
        )
        if m and m.group(1).strip():
            return unquote(m.group(1).strip())
    last = unquote(url.path.rstrip("/").rsplit("/", 1)[-1])
    return last or url.host or "page"


def check_url(url: str) -> httpx.URL:
    """``url`` parsed, if it is a link Quire may fetch: http(s), a host, no credentials."""
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise InputError(f"{url!r} is not a valid link ({exc})") from exc
    if parsed.scheme not in ("http", "https"):
        what = f"a {parsed.scheme}: link" if parsed.scheme else "a link without http(s)://"
        raise FetchRefused(f"{url} is {what}; Quire fetches http and https links only")
    if not parsed.host:
        raise InputError(f"{url} has no host name")
    if parsed.userinfo:
        raise FetchRefused(
            f"{parsed.host}: a link with a user name or password in it is not fetched (it "
            "would be stored with the document); save the page from the browser instead"
        )
    return parsed


class Fetcher:
    """One client for many links; every connection it opens goes through the guard."""

    def __init__(
        self,
        settings: Settings,
        *,
        resolver: Resolver = system_resolver,
        max_bytes: int | None = None,
        allow: Iterable[str] = (),
        hop_check: Callable[[str], None] | None = None,
    ) -> None:
        """``allow``: hosts allowed besides QUIRE_FETCH_ALLOW_HOSTS; ``hop_check``: called with
        every address fetched (the first and each redirect's), to refuse it by raising."""
        allowed = settings.fetch_allow_hosts.split(",")
        self.guard = AddressGuard([*allowed, *allow], resolver)
        self.hop_check = hop_check
        self.max_bytes = max_bytes if max_bytes is not None else settings.max_upload_bytes
        self.timeout_s = settings.fetch_timeout_s
        self.client = httpx.Client(
            transport=_transport(self.guard),
            follow_redirects=False,
            trust_env=False,
            headers={
                "User-Agent": USER_AGENT,
                "Accept": ACCEPT,
                "Accept-Encoding": "gzip, deflate",
            },
        )

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()

    def fetch(self, url: str, out: IO[bytes]) -> Fetched:
        """Stream what ``url`` serves into ``out``, following redirects; raises FetchRefused,
        FetchFailed, FileTooLarge or InputError with the reason."""
        deadline = time.monotonic() + self.timeout_s
        current = check_url(url).copy_with(fragment=None)  # never sent to the server
        if self.hop_check is not None:
            self.hop_check(str(current))
        seen = [str(current)]
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timeout(url)
            try:
                with self.client.stream("GET", current, timeout=remaining) as resp:
                    if resp.status_code in _REDIRECTS and "location" in resp.headers:
                        current = self._next_hop(url, current, resp.headers["location"], seen)
                        continue
                    if resp.status_code >= 400:
                        raise FetchFailed(
                            f"{current}: the server answered HTTP {resp.status_code} "
                            f"{resp.reason_phrase}".rstrip(),
                            detail={"url": str(current), "http_status": resp.status_code},
                        )
                    if resp.status_code != 200:
                        raise FetchFailed(
                            f"{current}: the server answered HTTP {resp.status_code} with "
                            "nothing to store"
                        )
                    size = self._body(resp, out, deadline)
                    media, _, params = resp.headers.get("content-type", "").partition(";")
                    charset = re.search(r"charset\s*=\s*\"?([\w.:-]+)", params, re.IGNORECASE)
                    return Fetched(
                        url=str(current),
                        requested=seen[0],
                        media_type=media.strip().lower(),
                        charset=charset.group(1).lower() if charset else None,
                        size=size,
                        filename=_filename(current, resp.headers.get("content-disposition")),
                        redirects=seen[1:],
                    )
            except httpx.TimeoutException as exc:
                raise self._timeout(url) from exc
            except httpx.HTTPError as exc:
                raise FetchFailed(
                    f"{current}: the fetch failed ({type(exc).__name__}: {exc})",
                    detail={"url": str(current)},
                ) from exc

    def _next_hop(self, url: str, current: httpx.URL, location: str, seen: list[str]) -> httpx.URL:
        try:
            target = current.join(location.strip())
        except (httpx.InvalidURL, UnicodeError) as exc:
            raise FetchFailed(f"{current} redirected to an invalid address ({exc})") from exc
        target = check_url(str(target.copy_with(fragment=None)))
        if str(target) in seen:
            raise FetchFailed(
                f"{url}: the redirects go round in a loop ({' → '.join([*seen, str(target)])})",
                detail={"redirects": [*seen[1:], str(target)]},
            )
        if len(seen) > MAX_REDIRECTS:
            raise FetchFailed(
                f"{url}: more than {MAX_REDIRECTS} redirects (the last to {target})",
                detail={"redirects": [*seen[1:], str(target)]},
            )
        if self.hop_check is not None:
            self.hop_check(str(target))
        seen.append(str(target))
        log.info("fetch %s: redirected to %s", url, target)
        return target

    def _body(self, resp: httpx.Response, out: IO[bytes], deadline: float) -> int:
        """Write the unpacked body to ``out``; its size. Stops at the size and time limits."""
        limit = self.max_bytes
        length = resp.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            raise self._too_large(resp.url, f"its {int(length) / 1024 / 1024:.1f} MB are")
        unpacker = _Unpacker(_encoding(resp.headers, str(resp.url)))
        raw = size = 0
        try:
            for block in resp.iter_raw():  # as read: the time limit is checked each time
                raw += len(block)
                if raw > limit:
                    raise self._too_large(resp.url, "the body is")
                for piece in unpacker.feed(block):
                    size += len(piece)
                    if size > limit:
                        raise self._too_large(resp.url, "the body unpacks to", unpacked=True)
                    out.write(piece)
                if time.monotonic() > deadline:
                    raise self._timeout(str(resp.url))
            tail = unpacker.finish()
        except zlib.error as exc:
            raise FetchFailed(
                f"{resp.url}: the body is not valid {unpacker.encoding} data ({exc})"
            ) from exc
        if size + len(tail) > limit:
            raise self._too_large(resp.url, "the body unpacks to", unpacked=True)
        out.write(tail)
        return size + len(tail)

    def _too_large(self, url: httpx.URL, what: str, *, unpacked: bool = False) -> FileTooLarge:
        limit_mb = self.max_bytes / 1024 / 1024
        why = " (a compressed body that unpacks past the limit is refused as a bomb)"
        return FileTooLarge(
            f"{url}: {what} over the {limit_mb:.0f} MB limit (QUIRE_MAX_UPLOAD_MB)"
            + (why if unpacked else ""),
        )

    def _timeout(self, url: str) -> FetchFailed:
        return FetchFailed(
            f"{url}: not fetched within {self.timeout_s:g} s (QUIRE_FETCH_TIMEOUT_S)",
            detail={"url": url, "timeout_s": self.timeout_s},
        )
