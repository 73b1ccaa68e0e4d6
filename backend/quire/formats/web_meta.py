"""What a saved web page says of itself (formats/web.py): its own address, site, date, title
and author, from its ``<meta>`` tags, canonical link, JSON-LD and ``<time>`` elements."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.html

from quire.formats.web_blocks import norm

MAX_JSON_LD = 100_000
_DATE_META = (
    "article:published_time", "og:published_time", "datepublished", "date", "dc.date",
    "dc.date.issued", "dcterms.date", "dcterms.created", "citation_publication_date",
    "citation_date", "pubdate", "publishdate", "sailthru.date", "parsely-pub-date",
)  # fmt: skip
_AUTHOR_META = (
    "author", "article:author", "dc.creator", "citation_author", "byl", "parsely-author",
)  # fmt: skip


def page_metadata(
    root: lxml.html.HtmlElement, url: str | None, saved_url: str | None
) -> dict[str, Any]:
    """url, site, published and the title/author (``_title``, ``_author``, ``_page_title``)."""
    metas: dict[str, str] = {}
    for m in root.iter("meta"):
        key = (m.get("property") or m.get("name") or m.get("itemprop") or "").strip().lower()
        value = norm(m.get("content") or "")
        if key and value and key not in metas:
            metas[key] = value
    ld = _json_ld(root)
    canonical = next(
        (
            (link.get("href") or "").strip()
            for link in root.iter("link")
            if "canonical" in (link.get("rel") or "").lower().split() and link.get("href")
        ),
        None,
    )
    page_title = norm(root.findtext(".//title") or "")
    own = url or _absolute(canonical, saved_url) or _absolute(metas.get("og:url"), saved_url)
    own = own or saved_url or ld.get("url")
    if own and urlsplit(own).scheme not in ("http", "https"):
        own = saved_url if saved_url and urlsplit(saved_url).scheme in ("http", "https") else None
    site = metas.get("og:site_name") or ld.get("publisher") or metas.get("application-name")
    if not site and own:
        site = urlsplit(own).hostname
    published = next((_iso_date(metas[k]) for k in _DATE_META if k in metas), None)
    published = published or _iso_date(ld.get("datePublished") or "")
    if not published:
        times = root.xpath("//article//time[@datetime] | //time[@pubdate][@datetime]")
        published = _iso_date(times[0].get("datetime")) if times else None
    author = next((metas[k] for k in _AUTHOR_META if k in metas and "://" not in metas[k]), None)
    author = author or ld.get("author")
    title = metas.get("og:title") or ld.get("headline") or page_title or None
    return {
        "url": own,
        "site": site,
        "published": published,
        "_title": title,
        "_author": author,
        "_page_title": page_title,
    }


def _absolute(href: str | None, base: str | None) -> str | None:
    if not href:
        return None
    return urljoin(base, href) if base else href


def _json_ld(root: lxml.html.HtmlElement) -> dict[str, str]:
    """headline, author, datePublished, publisher and url of the page's JSON-LD article."""
    found: dict[str, str] = {}
    for script in root.xpath("//script[@type='application/ld+json']"):
        raw = script.text or ""
        if len(raw) > MAX_JSON_LD:
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        nodes = data if isinstance(data, list) else data.get("@graph", [data])
        for node in nodes if isinstance(nodes, list) else []:
            if not isinstance(node, dict):
                continue
            for key in ("headline", "datePublished", "url"):
                if isinstance(node.get(key), str) and key not in found:
                    found[key] = node[key]
            author = node.get("author")
            named = [a.get("name") if isinstance(a, dict) else a for a in _listed(author)]
            names = [n for n in named if isinstance(n, str) and n.strip()]
            if names and "author" not in found:
                found["author"] = "; ".join(names)
            publisher = node.get("publisher")
            if isinstance(publisher, dict) and isinstance(publisher.get("name"), str):
                found.setdefault("publisher", publisher["name"])
    return found


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if value else []


def _iso_date(value: str | None) -> str | None:
    """``2015-05-05`` of ``2015-05-05T18:53:17+02:00``, ``2015-05-05`` or ``20150505``."""
    value = (value or "").strip()
    for text, fmt in ((value[:10], "%Y-%m-%d"), (value[:8], "%Y%m%d")):
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        return None
