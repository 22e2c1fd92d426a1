"""Fast validation of the File objects inside batches.

A batch carries up to hundreds of thousands of segments; DRF's per-field
machinery would spend seconds on them, so the File shape of
docs/api.md is checked here by hand. Every error names the exact
field (`files[3].segments[0][2]`) and says what is wrong, and a batch with
any bad file is rejected whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from core.errors import Invalid
from usenet.limits import (
    MAX_ARTICLE,
    MAX_DATE,
    MAX_MESSAGE_ID,
    MAX_POSTER,
    MAX_SEGMENT_BYTES,
    MAX_SUBJECT,
    MAX_TOTAL,
    MESSAGE_ID,
    storable_segment,
    storable_text,
)

Segment = tuple[int, int, str, int]


@dataclass(slots=True)
class FileReport:
    subject: str
    poster: str
    date: int
    total: int
    segments: list[Segment]


def _int(value: Any, path: str, low: int, high: int) -> int:
    # bool is an int in Python; JSON true is not a number here.
    if type(value) is not int:
        raise Invalid(f"{path}: must be a whole number.")
    if not low <= value <= high:
        raise Invalid(f"{path}: {value} is out of range ({low}..{high}).")
    return value


def _text(value: Any, path: str, limit: int) -> str:
    if storable_text(value, limit):
        return value
    # The shared rule said no (usenet/limits.py); say why.
    if type(value) is not str:
        raise Invalid(f"{path}: must be a string.")
    if len(value) > limit:
        raise Invalid(f"{path}: is {len(value)} characters long; at most {limit} are allowed.")
    if "\x00" in value:
        raise Invalid(f"{path}: must not contain NUL characters.")
    # JSON lets "\ud800" through; PostgreSQL cannot store it.
    raise Invalid(f"{path}: is not valid Unicode (it holds a lone surrogate).")


def validate_file(item: Any, path: str) -> FileReport:
    if not isinstance(item, dict):
        raise Invalid(f"{path}: must be an object with subject, poster, date, total and segments.")
    for key in ("subject", "poster", "date", "total", "segments"):
        if key not in item:
            raise Invalid(f"{path}.{key}: this field is required.")
    subject = _text(item["subject"], f"{path}.subject", MAX_SUBJECT)
    if not subject.strip():
        raise Invalid(f"{path}.subject: must not be empty.")
    poster = _text(item["poster"], f"{path}.poster", MAX_POSTER)
    date = _int(item["date"], f"{path}.date", 0, MAX_DATE)
    total = _int(item["total"], f"{path}.total", 1, MAX_TOTAL)
    raw_segments = item["segments"]
    if not isinstance(raw_segments, list):
        raise Invalid(f"{path}.segments: must be a list of [part, article, message-id, bytes].")
    if not raw_segments:
        raise Invalid(f"{path}.segments: must hold at least one segment.")
    if len(raw_segments) > total:
        raise Invalid(
            f"{path}.segments: holds {len(raw_segments)} segments, more than total ({total})."
        )
    segments: list[Segment] = []
    for index, seg in enumerate(raw_segments):
        spath = f"{path}.segments[{index}]"
        if not isinstance(seg, list) or len(seg) != 4:
            raise Invalid(f"{spath}: must be [part, article, message-id, bytes].")
        part, article, message_id, size = seg
        # The agent drops what this refuses, by the same rule (usenet/limits.py).
        if not storable_segment(part, article, message_id, size, total):
            _refuse_segment(seg, spath, total)
        segments.append((part, article, message_id, size))
    return FileReport(subject, poster, date, total, segments)


def _refuse_segment(seg: list[Any], spath: str, total: int) -> NoReturn:
    """Name what makes a segment unstorable (``storable_segment`` said it is)."""
    part, article, message_id, size = seg
    _int(part, f"{spath}[0]", 1, total)
    _int(article, f"{spath}[1]", 0, MAX_ARTICLE)
    _text(message_id, f"{spath}[2]", MAX_MESSAGE_ID)
    if not MESSAGE_ID.match(message_id):
        raise Invalid(f"{spath}[2]: {message_id[:80]!r} is not a message-id like <part@host>.")
    _int(size, f"{spath}[3]", 0, MAX_SEGMENT_BYTES)
    # Not reached while the checks above follow storable_segment.
    raise Invalid(f"{spath}: is not a segment the coordinator stores.")


def validate_files(value: Any, field: str, limit: int) -> list[FileReport]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid(f"{field}: must be a list of files.")
    if len(value) > limit:
        raise Invalid(f"{field}: holds {len(value)} files; at most {limit} per batch.")
    return [validate_file(item, f"{field}[{index}]") for index, item in enumerate(value)]
