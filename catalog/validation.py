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
from usenet.batch_columns import COLUMNS, COUNT_COLUMN, FILE_COLUMNS, SEGMENT_COLUMNS
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
    """A batch's `files` or `fragments`: a list of File objects, or the columnar form."""
    if value is None:
        return []
    if isinstance(value, dict):
        return validate_columns(value, field, limit)
    if not isinstance(value, list):
        raise Invalid(f"{field}: must be a list of files, or an object of columns.")
    if len(value) > limit:
        raise Invalid(f"{field}: holds {len(value)} files; at most {limit} per batch.")
    return [validate_file(item, f"{field}[{index}]") for index, item in enumerate(value)]


# --- the columnar form: one array per field ------------------------------------

FILE_FIELDS = (*FILE_COLUMNS, COUNT_COLUMN)  # one value per file


def _column(value: dict[str, Any], field: str, key: str) -> list[Any]:
    if key not in value:
        raise Invalid(f"{field}.{key}: this column is required.")
    column = value[key]
    if not isinstance(column, list):
        raise Invalid(f"{field}.{key}: must be a list.")
    return column


def _whole_numbers(values: list[Any], low: int, high: int) -> bool:
    # type() per value, not isinstance: bool is an int in Python, JSON true no number.
    return not values or (
        set(map(type, values)) == {int} and low <= min(values) and max(values) <= high
    )


def _first_refused(values: list[Any], path: str, low: int, high: int) -> NoReturn:
    for index, value in enumerate(values):
        _int(value, f"{path}[{index}]", low, high)
    raise AssertionError("a refused column holds no refused value")


def _message_ids(values: list[Any], path: str) -> None:
    if not values or (
        set(map(type, values)) == {str}
        and max(map(len, values)) <= MAX_MESSAGE_ID
        and all(map(MESSAGE_ID.match, values))
        and storable_text("".join(values), MAX_MESSAGE_ID * len(values))
    ):
        return
    for index, value in enumerate(values):
        spath = f"{path}[{index}]"
        _text(value, spath, MAX_MESSAGE_ID)
        if not MESSAGE_ID.match(value):
            raise Invalid(f"{spath}: {value[:80]!r} is not a message-id like <part@host>.")
    raise AssertionError("a refused column holds no refused message-id")


def validate_columns(value: dict[str, Any], field: str, limit: int) -> list[FileReport]:
    """Files in the columnar form (docs/api.md, "The columnar form"): one list per
    File field, one entry per file, `segments` the count of each file's segments,
    and one list per segment field, every file's segments end to end. Checked as
    strictly as the File objects, column by column; an error names the column and
    the index (`files.message_id[1234]`)."""
    unknown = sorted(set(value) - set(COLUMNS))
    if unknown:
        raise Invalid(
            f"{field}.{unknown[0]}: is not a column; columnar files have {', '.join(COLUMNS)}."
        )
    columns = {key: _column(value, field, key) for key in COLUMNS}
    count = len(columns["subject"])
    if count > limit:
        raise Invalid(f"{field}: holds {count} files; at most {limit} per batch.")
    for key in FILE_FIELDS[1:]:
        if len(columns[key]) != count:
            raise Invalid(
                f"{field}.{key}: holds {len(columns[key])} values for {count} files "
                "(one per file, as subject)."
            )
    counts = columns["segments"]
    if not _whole_numbers(counts, 1, MAX_TOTAL):
        _first_refused(counts, f"{field}.segments", 1, MAX_TOTAL)
    segments = sum(counts)
    for key in SEGMENT_COLUMNS:
        if len(columns[key]) != segments:
            raise Invalid(
                f"{field}.{key}: holds {len(columns[key])} values; the files' segment "
                f"counts add up to {segments} (one per segment, file after file)."
            )
    parts, articles, sizes = columns["part"], columns["article"], columns["bytes"]
    message_ids = columns["message_id"]
    for key, low, high in (("part", 1, MAX_TOTAL), ("article", 0, MAX_ARTICLE),
                           ("bytes", 0, MAX_SEGMENT_BYTES)):  # fmt: skip
        if not _whole_numbers(columns[key], low, high):
            _first_refused(columns[key], f"{field}.{key}", low, high)
    _message_ids(message_ids, f"{field}.message_id")
    reports: list[FileReport] = []
    first = 0
    for index, (subject, poster, date, total, held) in enumerate(
        zip(*(columns[key] for key in FILE_FIELDS), strict=True)
    ):
        path = f"{field}[{index}]"
        subject = _text(subject, f"{field}.subject[{index}]", MAX_SUBJECT)
        if not subject.strip():
            raise Invalid(f"{field}.subject[{index}]: must not be empty.")
        poster = _text(poster, f"{field}.poster[{index}]", MAX_POSTER)
        date = _int(date, f"{field}.date[{index}]", 0, MAX_DATE)
        total = _int(total, f"{field}.total[{index}]", 1, MAX_TOTAL)
        end = first + held
        if held > total:
            raise Invalid(f"{path}: holds {held} segments, more than total ({total}).")
        if max(parts[first:end]) > total:
            where = first + next(i for i, p in enumerate(parts[first:end]) if p > total)
            raise Invalid(
                f"{field}.part[{where}]: {parts[where]} is out of range (1..{total}, "
                f"the total of file {index})."
            )
        rows = zip(parts[first:end], articles[first:end], message_ids[first:end],
                   sizes[first:end], strict=True)  # fmt: skip
        reports.append(FileReport(subject, poster, date, total, list(rows)))
        first = end
    return reports
