"""The newznab API's documents: RSS 2.0 with the newznab namespace, its JSON form,
t=caps and the spec's error element (newznab API specification v0.4).

Built with the standard library's ElementTree, which escapes text and
attributes; characters XML 1.0 cannot carry become U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import format_datetime
from typing import Any
from xml.etree import ElementTree as ET

from .categories import CATEGORIES

NEWZNAB_NS = "http://www.newznab.com/DTD/2010/feeds/attributes/"
ATOM_NS = "http://www.w3.org/2005/Atom"
ET.register_namespace("newznab", NEWZNAB_NS)
ET.register_namespace("atom", ATOM_NS)

XML_CONTENT_TYPE = "application/rss+xml; charset=utf-8"
PLAIN_XML_CONTENT_TYPE = "application/xml; charset=utf-8"
JSON_CONTENT_TYPE = "application/json"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

ERROR_DESCRIPTIONS = {
    100: "Incorrect user credentials",
    101: "Account suspended",
    200: "Missing parameter",
    201: "Incorrect parameter",
    202: "No such function",
    203: "Function not available",
    300: "No such item",
    500: "Request limit reached",
    900: "Unknown error",
}


@dataclass(frozen=True, slots=True)
class FeedItem:
    title: str
    guid: str
    link: str  # the NZB (t=get)
    comments: str  # the details (t=details)
    published: datetime
    category: str  # "TV > HD"
    size: int
    attrs: Sequence[tuple[str, str]] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Feed:
    title: str
    link: str
    description: str
    offset: int
    total: int
    items: Sequence[FeedItem]


def _clean(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: _clean(v) for k, v in attrs.items()})
    if text is not None:
        element.text = _clean(text)
    return element


def _document(root: ET.Element) -> bytes:
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def render_rss(feed: Feed) -> bytes:
    rss = ET.Element("rss", {"version": "2.0"})
    channel = _sub(rss, "channel")
    _sub(channel, f"{{{ATOM_NS}}}link", href=feed.link, rel="self", type="application/rss+xml")
    _sub(channel, "title", feed.title)
    _sub(channel, "description", feed.description)
    _sub(channel, "link", feed.link)
    _sub(channel, "language", "en-gb")
    _sub(channel, f"{{{NEWZNAB_NS}}}response", offset=str(feed.offset), total=str(feed.total))
    for item in feed.items:
        node = _sub(channel, "item")
        _sub(node, "title", item.title)
        _sub(node, "guid", item.guid, isPermaLink="false")
        _sub(node, "link", item.link)
        _sub(node, "comments", item.comments)
        _sub(node, "pubDate", format_datetime(item.published))
        _sub(node, "category", item.category)
        _sub(node, "description", item.title)
        _sub(node, "enclosure", url=item.link, length=str(item.size), type="application/x-nzb")
        for name, value in item.attrs:
            _sub(node, f"{{{NEWZNAB_NS}}}attr", name=name, value=value)
    return _document(rss)


def _attributes(**values: Any) -> dict[str, Any]:
    return {"@attributes": {k: str(v) for k, v in values.items()}}


def feed_json(feed: Feed) -> dict[str, Any]:
    """The JSON form newznab servers answer `o=json` with (XML attributes under "@attributes")."""
    items = [
        {
            "title": item.title,
            "guid": item.guid,
            "link": item.link,
            "comments": item.comments,
            "pubDate": format_datetime(item.published),
            "category": item.category,
            "description": item.title,
            "enclosure": _attributes(url=item.link, length=item.size, type="application/x-nzb"),
            "attr": [_attributes(name=name, value=value) for name, value in item.attrs],
        }
        for item in feed.items
    ]
    return {
        **_attributes(version="2.0"),
        "channel": {
            "title": feed.title,
            "description": feed.description,
            "link": feed.link,
            "language": "en-gb",
            "response": _attributes(offset=feed.offset, total=feed.total),
            "item": items,
        },
    }


@dataclass(frozen=True, slots=True)
class Capabilities:
    title: str
    url: str
    default_limit: int
    max_limit: int
    searching: Sequence[tuple[str, bool, str]]  # (tag, available, supportedParams)


def caps_tree(caps: Capabilities) -> ET.Element:
    root = ET.Element("caps")
    _sub(root, "server", version="1.0", title=caps.title, url=caps.url)
    _sub(root, "limits", max=str(caps.max_limit), default=str(caps.default_limit))
    _sub(root, "registration", available="no", open="no")
    searching = _sub(root, "searching")
    for tag, available, params in caps.searching:
        _sub(searching, tag, available="yes" if available else "no", supportedParams=params)
    categories = _sub(root, "categories")
    for category in CATEGORIES:
        parent = _sub(categories, "category", id=str(category.id), name=category.name)
        for sub_id, sub_name in category.subcats:
            _sub(parent, "subcat", id=str(sub_id), name=sub_name)
    return root


def render_caps(caps: Capabilities) -> bytes:
    return _document(caps_tree(caps))


def _element_json(element: ET.Element) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if element.attrib:
        out["@attributes"] = dict(element.attrib)
    for child in element:
        out.setdefault(child.tag, []).append(_element_json(child))
    return {
        k: v[0] if isinstance(v, list) and len(v) == 1 and k != "category" else v
        for k, v in out.items()
    }


def caps_json(caps: Capabilities) -> dict[str, Any]:
    return _element_json(caps_tree(caps))


def render_error(code: int, description: str | None = None) -> bytes:
    root = ET.Element(
        "error", {"code": str(code), "description": _clean(description or ERROR_DESCRIPTIONS[code])}
    )
    return _document(root)


def error_json(code: int, description: str | None = None) -> dict[str, Any]:
    return {"error": _attributes(code=code, description=description or ERROR_DESCRIPTIONS[code])}
