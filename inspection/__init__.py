"""Inspection of obfuscated posts: what a first article's bytes say about a release.

No Django here: the node agent runs these on article bodies it fetches
(issue 26), and reports ``inspect_article``'s result to the coordinator as
JSON. Each format has its parser, its bounds and its error class
(docs/inspection.md): ``yenc`` (the article body), ``par2`` (an index file's
packets), ``nfo`` (its text), ``archives`` (RAR 4, RAR 5, 7z and zip first
volumes). Every error is an ``InspectError``; ``inspect_article`` turns them
into the result's ``errors`` and never raises one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from usenet.nntp.client import unstuff

from . import archives, nfo, par2, yenc
from .errors import (
    ArchiveError,
    InspectError,
    NfoError,
    Par2Error,
    RarError,
    SevenZipError,
    YencError,
    ZipError,
)

__all__ = [
    "MAX_LEASE_COUNT",
    "MAX_LEASE_MESSAGE_IDS",
    "MAX_NFO_SEGMENTS",
    "MAX_REPORTS_TOGETHER",
    "ROLES",
    "ArchiveError",
    "FoundFile",
    "InspectError",
    "InspectResult",
    "NfoError",
    "Par2Error",
    "RarError",
    "SevenZipError",
    "YencError",
    "ZipError",
    "inspect_article",
    "inspect_nfo",
    "join_nfo",
]

ROLES = ("par2", "nfo", "archive")
# A report's files and names: the coordinator accepts no more (catalog.inspection),
# and its body cap (inspections.serializers.MAX_REPORT_BYTES) holds a report at these
# bounds even with every character JSON-escaped (the agent sends ASCII JSON: up to 12
# bytes a character). 255: no common file system stores a longer file name.
MAX_REPORTED_FILES = 1000
MAX_REPORTED_NAME = 255  # characters
MAX_NOTES = 16
MAX_ERROR = 300  # characters of an error's sentence

# What one inspection lease may name: the coordinator plans no more, and the agent
# refuses a lease with more (it reads the lease's articles one by one). A par2 and
# an archive name their first segment each, an nfo up to MAX_NFO_SEGMENTS of its own.
MAX_NFO_SEGMENTS = 64
MAX_LEASE_MESSAGE_IDS = MAX_NFO_SEGMENTS + 2
# The most inspections one lease call hands out (its `count`), and the most reports
# one POST /inspections/reports carries (docs/api.md): the coordinator refuses more,
# and the agent asks for no more.
MAX_LEASE_COUNT = 16
MAX_REPORTS_TOGETHER = 4


@dataclass(slots=True)
class FoundFile:
    """A file named inside the article: by a par2 FileDesc or an archive header."""

    name: str
    size: int | None
    encrypted: bool | None = None
    packed_size: int | None = None
    md5: str | None = None
    hash16k: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "size": self.size,
            "encrypted": self.encrypted,
            "packed_size": self.packed_size,
            "md5": self.md5,
            "hash16k": self.hash16k,
        }


@dataclass(slots=True)
class InspectResult:
    """What one article showed, bounded in size, ready for json.dumps via to_json()."""

    role: str
    format: str | None = None  # "par2", "nfo", "rar4", "rar5", "7z", "zip"
    yenc: dict[str, Any] | None = None
    files: list[FoundFile] = field(default_factory=list)
    files_truncated: bool = False
    imdb_ids: list[str] = field(default_factory=list)
    tvdb_ids: list[str] = field(default_factory=list)
    release_names: list[str] = field(default_factory=list)
    volume: bool | None = None
    solid: bool | None = None
    headers_encrypted: bool | None = None
    passworded: bool | None = None
    archive_size: int | None = None
    complete: bool | None = None
    notes: list[str] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)  # {"part": "yenc", "error": ...}

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, copied (as ``dataclasses.asdict`` gives it, field for field, without
        its deep copy of every value: a quarter of a node's report work)."""
        return {
            "role": self.role,
            "format": self.format,
            "yenc": None if self.yenc is None else dict(self.yenc),
            "files": [found.to_json() for found in self.files],
            "files_truncated": self.files_truncated,
            "imdb_ids": list(self.imdb_ids),
            "tvdb_ids": list(self.tvdb_ids),
            "release_names": list(self.release_names),
            "volume": self.volume,
            "solid": self.solid,
            "headers_encrypted": self.headers_encrypted,
            "passworded": self.passworded,
            "archive_size": self.archive_size,
            "complete": self.complete,
            "notes": list(self.notes),
            "errors": [dict(error) for error in self.errors],
        }

    def error(self, part: str, error: InspectError) -> None:
        self.errors.append({"part": part, "error": str(error)[:MAX_ERROR]})

    def add_file(self, found: FoundFile) -> None:
        if len(self.files) >= MAX_REPORTED_FILES:
            self.files_truncated = True
            return
        found.name = found.name[:MAX_REPORTED_NAME]
        self.files.append(found)


def inspect_article(role: str, body: bytes, *, stuffed: bool = False) -> InspectResult:
    """What the article body (yEnc, dot-stuffing undone) of a par2, nfo or archive shows.

    `stuffed`: the body is as on the wire, dot-stuffing left in (yenc.decode).
    An nfo may also be posted as plain text: a body with no =ybegin is read as
    the nfo itself. Errors land in the result's ``errors``, one per part that
    failed ("yenc", then the format's), never as an exception.
    """
    result = InspectResult(role=role)
    if role not in ROLES:
        result.error("role", InspectError(f"The role {role[:40]!r} is not one of {ROLES}."))
        return result
    try:
        part = yenc.decode(body, stuffed=stuffed)
    except YencError as error:
        if role == "nfo" and b"=ybegin " not in body[: yenc.MAX_PREAMBLE + 9]:
            _nfo(result, unstuff(body) if stuffed else body)
        else:
            result.error("yenc", error)
        return result
    result.yenc = _yenc_facts(part)
    if role == "par2":
        _par2(result, part.data)
    elif role == "nfo":
        _nfo(result, part.data)
    else:
        _archive(result, part.data)
    return result


def inspect_nfo(
    bodies: Iterable[bytes], max_bytes: int = nfo.MAX_NFO, *, stuffed: bool = False
) -> InspectResult:
    """What an nfo posted in one or more articles shows: each body decoded, the data
    joined in order up to `max_bytes`, then parsed; one result with role "nfo"
    (``join_nfo``, then its ``parse``)."""
    return join_nfo(bodies, max_bytes, stuffed=stuffed).parse()


@dataclass
class JoinedNfo:
    """An nfo's articles decoded and joined (``join_nfo``), not yet parsed: the node
    parses it on another thread than the one that fetches."""

    result: InspectResult  # the first segment's yEnc facts, the join's errors
    data: bytes
    segments: int
    parsed: bool = False

    def parse(self) -> InspectResult:
        """The result, with what the joined text shows; parsed once, however often
        asked (a report built again after a failed call); never raises."""
        if self.segments and not self.parsed:
            self.parsed = True
            _nfo(self.result, self.data)
            if self.segments > 1:
                self.result.notes.append(f"joined from {self.segments} articles")
        return self.result


def join_nfo(
    bodies: Iterable[bytes], max_bytes: int = nfo.MAX_NFO, *, stuffed: bool = False
) -> JoinedNfo:
    """An nfo posted in one or more articles: each body decoded, the data joined in
    order up to `max_bytes`; ``JoinedNfo.parse`` parses it.

    `bodies` is consumed lazily and no further once `max_bytes` are joined (the
    node fetches each segment as it is asked for). A first body without =ybegin is
    a plain-text nfo. A segment that fails to decode, or does not start where the
    one before it ended, ends the join there: what was joined is parsed, and the
    segment's error is in ``errors``. Never raises an InspectError. `stuffed`: the
    bodies are as on the wire (yenc.decode).
    """
    result = InspectResult(role="nfo")
    joined = bytearray()
    expected_begin: int | None = None
    segments = 0
    for number, body in enumerate(bodies, start=1):
        try:
            part = yenc.decode(body, stuffed=stuffed)
        except YencError as error:
            if number == 1 and b"=ybegin " not in body[: yenc.MAX_PREAMBLE + 9]:
                joined += (unstuff(body) if stuffed else body)[:max_bytes]
                segments = 1
            else:
                result.error("yenc", YencError(f"segment {number}: {error}"))
            break
        header = part.header
        if number == 1:
            result.yenc = _yenc_facts(part)
        elif (
            header.begin is not None
            and expected_begin is not None
            and (header.begin != expected_begin)
        ):
            result.error(
                "yenc",
                YencError(f"segment {number} begins at byte {header.begin}, not {expected_begin}"),
            )
            break
        expected_begin = header.end + 1 if header.end is not None else None
        joined += part.data[: max_bytes - len(joined)]
        segments = number
        if len(joined) >= max_bytes:
            break
    return JoinedNfo(result, bytes(joined), segments)


def _yenc_facts(part: yenc.YencPart) -> dict[str, Any]:
    header = part.header
    return {
        "name": header.name[:MAX_REPORTED_NAME],
        "size": header.size,
        "part": header.part,
        "total": header.total,
        "begin": header.begin,
        "end": header.end,
        "crc_checked": part.crc_checked,
    }


def _par2(result: InspectResult, data: bytes) -> None:
    result.format = "par2"
    try:
        found = par2.parse(data)
    except Par2Error as error:
        result.error("par2", error)
        return
    for described in found.files:
        result.add_file(
            FoundFile(
                name=described.name,
                size=described.size,
                md5=described.md5,
                hash16k=described.hash16k,
            )
        )
    result.complete = found.main_found
    if not found.main_found:
        result.notes.append("no main packet in the article: the files are those described")
    if found.damaged:
        result.notes.append(f"{found.damaged} damaged packet headers skipped")


def _nfo(result: InspectResult, data: bytes) -> None:
    result.format = "nfo"
    try:
        facts = nfo.parse(data)
    except NfoError as error:
        result.error("nfo", error)
        return
    result.imdb_ids = list(facts.imdb_ids)
    result.tvdb_ids = list(facts.tvdb_ids)
    result.release_names = [name[:MAX_REPORTED_NAME] for name in facts.release_names]
    result.notes.append(f"read as {facts.encoding}")
    if facts.truncated:
        result.notes.append(f"only the first {nfo.MAX_NFO} bytes were read")


def _archive(result: InspectResult, data: bytes) -> None:
    try:
        facts = archives.parse(data)
    except ArchiveError as error:
        result.format = archives.detect(data)
        result.error("archive", error)
        return
    result.format = facts.format
    for entry in facts.entries:
        result.add_file(
            FoundFile(
                name=entry.name,
                size=entry.size,
                encrypted=entry.encrypted,
                packed_size=entry.packed_size,
            )
        )
    result.volume = facts.volume
    result.solid = facts.solid
    result.headers_encrypted = facts.headers_encrypted
    result.passworded = facts.passworded
    result.archive_size = facts.archive_size
    result.complete = facts.complete
    result.notes.extend(facts.notes[:MAX_NOTES])
