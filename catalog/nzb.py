"""NZB 1.1 documents (the newzbin format every Usenet downloader reads).

Built as text with escaping done here, so no XML library is needed at run
time. Characters XML 1.0 cannot carry (control characters a subject may hold)
become U+FFFD rather than making the document invalid.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

DOCTYPE = (
    '<!DOCTYPE nzb PUBLIC "-//newzBin//DTD NZB 1.1//EN" '
    '"http://www.newzbin.com/DTD/nzb/nzb-1.1.dtd">'
)
NAMESPACE = "http://www.newzbin.com/DTD/2003/nzb"
CONTENT_TYPE = "application/x-nzb"

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._+\-\[\]() ]+")


@dataclass(frozen=True, slots=True)
class NzbFile:
    subject: str
    poster: str
    date: int  # Unix time
    groups: Sequence[str]
    segments: Sequence[tuple[int, str, int]]  # (number, message-id with brackets, bytes)


def _text(value: str) -> str:
    return escape(_NOT_XML.sub("\ufffd", value))


def _attr(value: str) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", value), {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


# The <head> meta that maps a posted (obfuscated) file name to its real one
# (docs/inspection.md, "Matching files to their real names").
REAL_NAME_META = "x-real-name"
REAL_NAME_ARROW = " => "


def render_nzb(
    files: Iterable[NzbFile],
    title: str | None = None,
    real_names: Mapping[str, str] | None = None,
) -> bytes:
    """An NZB 1.1 document whole (small ones; the API streams ``nzb_chunks``)."""
    return b"".join(nzb_chunks(files, title, real_names))


def _head(title: str | None, real_names: Mapping[str, str] | None) -> list[str]:
    """The <head>: the release's name (`title`, and `name` once inspection named it),
    and `posted => real` per file inspection matched. Subjects stay as posted."""
    metas = []
    if title:
        metas.append(f'  <meta type="title">{_text(title)}</meta>')
    if real_names:
        if title:
            metas.append(f'  <meta type="name">{_text(title)}</meta>')
        metas += [
            f'  <meta type="{REAL_NAME_META}">{_text(posted + REAL_NAME_ARROW + real)}</meta>'
            for posted, real in sorted(real_names.items())
            if REAL_NAME_ARROW not in posted
        ]
    return [" <head>", *metas, " </head>"] if metas else []


def nzb_chunks(
    files: Iterable[NzbFile],
    title: str | None = None,
    real_names: Mapping[str, str] | None = None,
) -> Iterator[bytes]:
    """An NZB 1.1 document in pieces: the head, then one <file> (segments in part order)
    at a time, so a release of a thousand files is never one string in memory."""
    head = ['<?xml version="1.0" encoding="utf-8"?>', DOCTYPE, f'<nzb xmlns="{NAMESPACE}">']
    head += _head(title, real_names)
    yield ("\n".join(head) + "\n").encode("utf-8")
    for item in files:
        yield _file_element(item)
    yield b"</nzb>\n"


def _file_element(item: NzbFile) -> bytes:
    out = [
        f' <file poster={_attr(item.poster)} date="{int(item.date)}"'
        f" subject={_attr(item.subject)}>",
        "  <groups>",
        *(f"   <group>{_text(group)}</group>" for group in item.groups),
        "  </groups>",
        "  <segments>",
    ]
    for number, message_id, size in sorted(item.segments):
        # NZB carries message-ids without their angle brackets.
        bare = message_id[1:-1] if message_id.startswith("<") else message_id
        out.append(
            f'   <segment bytes="{int(size)}" number="{int(number)}">{_text(bare)}</segment>'
        )
    out += ["  </segments>", " </file>"]
    return ("\n".join(out) + "\n").encode("utf-8")


def content_disposition(name: str) -> str:
    """An attachment header whose plain filename is safe anywhere, plus the UTF-8 original."""
    stem = _UNSAFE_FILENAME.sub("_", name).strip(" ._") or "catalog"
    stem = stem[:150]
    return f"attachment; filename=\"{stem}.nzb\"; filename*=UTF-8''{quote(name[:150] + '.nzb', safe='')}"
