"""Adding a link to the library: the page (or the PDF, EPUB, Office file behind it) fetched by
web/fetch.py, or the HTML the browser extension sends, stored like an upload and read by the
reader its bytes call for.

    added = add_link(db, settings, "https://example.org/post?utm_source=x", fetcher=fetcher)
    added.status        # added | updated | unchanged
    added.intake        # the intake (document id, job id, kind)

A link's document has the source key ``url:<normalised address>``: adding it again fetches it
again, and changed bytes become a new version of that document (as a changed watched file
does: intake's source-key rule); the same bytes leave it "unchanged", and so does a page that
differs only in what changes on every fetch (scripts, styles, comments, CSRF tokens:
``page_fingerprint``). Its origin, ``{"type": "web", "url", "fetched_at", "cite"}`` (so
``documents.origin`` is "web"), puts ``url`` (the address the bytes came from, after
redirects, normalised) and ``fetched_at`` in the document's metadata, over what the reader
finds. A page is stored as UTF-8 (with a BOM, its ``<meta charset>`` saying so), decoded from
what it declared or, when that is wrong, what it is (the reader's rule: formats/web.py
decode_html).
"""

from __future__ import annotations

import codecs
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlencode

from quire.config import Settings
from quire.errors import NeedsJavaScript, QuireError
from quire.formats.web import decode_html
from quire.ingest.intake import Intake, add_file
from quire.storage import documents, jobs
from quire.storage.db import Database
from quire.web.fetch import Fetcher, check_url

LinkStatus = Literal["added", "updated", "unchanged"]
#: What intake did -> what adding the link did ("requeued": the same bytes failed before).
_STATUS: dict[str, LinkStatus] = {
    "queued": "added",
    "updated": "updated",
    "requeued": "updated",
    "duplicate": "unchanged",
}
#: Query parameters that say where a click came from, never what the page is.
_TRACKING = re.compile(r"^(utm_\w+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_hsenc|_hsmi)$", re.I)
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_HTML_START = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)\b", re.I | re.S)
_META_CHARSET_TEXT = re.compile(r"""(<meta\b[^>]*?charset\s*=\s*["']?\s*)([\w.:-]+)""", re.I)
_SCRIPT = re.compile(r"<script\b[^>]*>(.*?)</script\s*>", re.I | re.S)
_NOSCRIPT = re.compile(r"<noscript\b[^>]*>(.*?)</noscript\s*>", re.I | re.S)
_HIDDEN = re.compile(r"<(script|style|noscript|template|svg|head)\b[^>]*>.*?</\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]+>")
_ASKS_FOR_SCRIPTS = re.compile(
    r"javascript|enable\s+js|turn\s+on\s+js|browser\s+(?:is\s+)?not\s+supported", re.I
)
#: What changes from one fetch of an unchanged page to the next: scripts, styles, comments,
#: hidden form fields and CSRF tokens, nonces and integrity hashes.
_VOLATILE = re.compile(
    r"<(script|style|template|noscript)\b[^>]*>.*?</\1\s*>|<!--.*?-->"
    r"|<input\b[^>]*type\s*=\s*[\"']?hidden[^>]*>|<meta\b[^>]*(?:csrf|nonce)[^>]*>",
    re.I | re.S,
)
_VOLATILE_ATTR = re.compile(
    r"""\s(?:nonce|integrity|data-csrf[\w-]*)\s*=\s*("[^"]*"|'[^']*'|\S+)""", re.I
)
#: A page showing at least this many words without scripts is not judged to need them.
ENOUGH_WORDS = 80


@dataclass(frozen=True)
class AddedLink:
    """What adding one link did."""

    url: str
    status: LinkStatus
    intake: Intake


def normalise_url(url: str) -> str:
    """The address a link is known by: scheme and host in lower case, the default port, the
    fragment and tracking parameters (utm_*, fbclid …) dropped."""
    parsed = check_url(url)
    host = parsed.raw_host.decode("ascii").lower().rstrip(".")
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[parsed.scheme]
    port = f":{parsed.port}" if parsed.port not in (None, default) else ""
    query = urlencode(
        [
            (k, v)
            for k, v in parse_qsl(parsed.query.decode(), keep_blank_values=True)
            if not _TRACKING.match(k)
        ]
    )
    path = parsed.raw_path.split(b"?", 1)[0].decode("ascii") or "/"
    return f"{parsed.scheme}://{host}{port}{path}" + (f"?{query}" if query else "")


def source_key(url: str) -> str:
    """The source key of the document a link adds."""
    return "url:" + normalise_url(url)


def is_html(data: bytes, media_type: str = "") -> bool:
    """Whether fetched bytes are a web page (by its type, else by how it starts)."""
    head = data[:1024].removeprefix(codecs.BOM_UTF8)
    return bool(_HTML_START.match(head)) or (media_type in _HTML_TYPES and b"<" in head)


def as_utf8_page(text: str) -> bytes:
    """A page's text as the bytes stored: UTF-8 with a BOM, any ``<meta charset>`` saying so."""
    text = text.removeprefix("\ufeff")
    head, body = text[:4096], text[4096:]
    head = _META_CHARSET_TEXT.sub(lambda m: m.group(1) + "utf-8", head)
    return codecs.BOM_UTF8 + (head + body).encode("utf-8")


def needs_javascript(text: str) -> bool:
    """Whether a page shows its text only through scripts: next to no words outside scripts,
    and a ``<noscript>`` asking for JavaScript or far more script than text."""
    visible = _TAG.sub(" ", _HIDDEN.sub(" ", text))
    words = len(visible.split())
    if words >= ENOUGH_WORDS:
        return False
    noscript = " ".join(_NOSCRIPT.findall(text))
    script_chars = sum(len(s) for s in _SCRIPT.findall(text))
    return bool(_ASKS_FOR_SCRIPTS.search(noscript)) or script_chars > 2000 + 40 * words


def page_fingerprint(text: str) -> str:
    """A page with what changes on every fetch left out (scripts, styles, comments, tokens):
    two fetches of an unchanged page have the same fingerprint."""
    return " ".join(_VOLATILE_ATTR.sub(" ", _VOLATILE.sub(" ", text)).split())


def _unchanged_page(db: Database, settings: Settings, key: str, text: str) -> Intake | None:
    """The document ``key`` names, when its stored page is ``text`` but for its volatile
    parts; None otherwise (also when another person holds it: intake says so)."""
    with db.read() as conn:
        prior = documents.by_source_key(conn, key)
        if prior is None or prior.status == "failed" or not documents.is_readable(conn, prior.id):
            return None
        doc = documents.get_document(conn, prior.id)
        try:
            stored = documents.original_of(conn, settings.files_dir, prior.id)
            old = stored.read_bytes()
        except (QuireError, OSError):
            return None
        job = jobs.latest_for_document(conn, prior.id)
    if not is_html(old) or page_fingerprint(decode_html(old)) != page_fingerprint(text):
        return None
    job_id = job.id if job else None
    return Intake(prior.id, job_id, "duplicate", doc["kind"], doc["filename"], doc["sha256"])


def _page_name(url: str) -> str:
    """A stored page's file name, after its address: ``example.org-blog-post.html``."""
    parsed = check_url(url)
    slug = re.sub(r"[^\w.-]+", "-", f"{parsed.host}{parsed.path}").strip("-.")
    slug = re.sub(r"\.(html?|xhtml|php|aspx?|jsp)$", "", slug[:200], flags=re.I)
    return f"{slug or 'page'}.html"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def add_link(
    db: Database,
    settings: Settings,
    url: str,
    *,
    fetcher: Fetcher,
    html: str | None = None,
    title: str | None = None,
) -> AddedLink:
    """Fetch ``url`` (or take ``html``, the page as the browser rendered it) and add it to the
    library; raises the fetch's or intake's error (nothing is stored then)."""
    key = source_key(url)
    tmp_dir = settings.data_dir / "tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="link-")
    tmp = Path(name)
    try:
        if html is None:
            with os.fdopen(fd, "wb") as out:
                fetched = fetcher.fetch(url, out)
            final, filename, text = fetched.url, fetched.filename, None
            if is_html(_head(tmp), fetched.media_type):
                text = decode_html(tmp.read_bytes(), fetched.charset)
                if needs_javascript(text):
                    raise NeedsJavaScript(
                        f"{final} shows its text only through JavaScript, which Quire does not "
                        "run: save it with the browser extension (Save to Quire), which sends "
                        "the page as your browser shows it",
                        detail={"url": final},
                    )
        else:
            os.close(fd)
            final, filename, text = url.strip(), "", html
        fetched_at = _now()
        same = _unchanged_page(db, settings, key, text) if text is not None else None
        if same is not None:
            intake = same
        else:
            if text is not None:
                tmp.write_bytes(as_utf8_page(text))
                filename = _page_name(final)
            intake = add_file(
                db,
                settings.files_dir,
                tmp,
                filename,
                max_bytes=settings.max_upload_bytes,
                source_key=key,
                move=True,
            )
    finally:
        tmp.unlink(missing_ok=True)
    status = _STATUS[intake.status]
    with db.write() as conn:
        mine = documents.by_source_key(conn, key)
        # The same bytes held under another source (an upload, another link) stay as they are.
        if mine is not None and mine.id == intake.document_id:
            cite = {"url": normalise_url(final), "fetched_at": fetched_at}
            origin = {"type": "web", "url": key[4:], "fetched_at": fetched_at, "cite": cite}
            documents.set_origin(conn, intake.document_id, origin)
            if title and title.strip() and status != "unchanged":
                documents.set_title(conn, intake.document_id, title.strip()[:500])
    return AddedLink(key[4:], status, intake)


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(1024)
