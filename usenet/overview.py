"""Parse RFC 3977 overview (OVER/XOVER) lines into small records.

Shared by the agent and the coordinator, and on the hot path: one split per line,
a precompiled date regex, small caches. Why text that is not UTF-8 is read as
Latin-1: docs/seed-node.md ("Overview lines").
"""

from __future__ import annotations

import re
from datetime import date as _calendar_date
from email.utils import mktime_tz, parsedate_tz
from typing import NamedTuple

from .limits import MAX_POSTER, MAX_SUBJECT
from .numbers import ascii_digits

__all__ = ["Overview", "parse_date", "parse_over_line"]

# number, subject, from, date, message-id, references, bytes, lines (RFC 3977 8.3.2);
# any further fields are extra headers such as Xref, which we do not need.
_MANDATORY_FIELDS = 8


class Overview(NamedTuple):
    """The fields of one overview line the indexer uses."""

    article: int
    subject: str
    poster: str
    date: int | None
    message_id: str
    bytes: int


def parse_over_line(line: bytes) -> Overview | None:
    """Parse one overview line; None when it is malformed.

    Malformed: fewer than 8 tab-separated fields, an article number or byte count
    that is not a plain decimal number, a message-id not in angle brackets, or a
    subject or poster longer than the coordinator stores (MAX_SUBJECT, MAX_POSTER:
    such a post could never be reported, and its length is all a hostile poster
    has to slow the rules with; docs/security.md, "Hostile Usenet input").
    An empty byte count is read as 0 (some servers leave it out).
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _parse_mixed_line(line)
    return _parse_fields(text.rstrip("\r\n").split("\t"))


def _parse_mixed_line(line: bytes) -> Overview | None:
    # Rare: some field is not UTF-8. Decode field by field so a UTF-8 subject beside
    # a Latin-1 poster still reads right.
    return _parse_fields([_decode_field(field) for field in line.rstrip(b"\r\n").split(b"\t")])


def _decode_field(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _parse_fields(fields: list[str]) -> Overview | None:
    if len(fields) < _MANDATORY_FIELDS:
        return None
    number, subject, poster, date_text, message_id, _references, size = fields[:7]
    # ascii_digits() first: int() would also take " 12", "+12", "1_000" and "\u0661\u0662".
    if not ascii_digits(number) or not (size == "" or ascii_digits(size)):
        return None
    if not (message_id.startswith("<") and message_id.endswith(">")):
        return None
    if len(subject) > MAX_SUBJECT or len(poster) > MAX_POSTER:
        return None
    size_bytes = int(size) if size else 0
    return Overview(int(number), subject, poster, parse_date(date_text), message_id, size_bytes)


# --- dates --------------------------------------------------------------------------

# "Mon, 02 Jan 2006 15:04:05 +0000" and its usual variations: no weekday, dashes
# ("02-Jan-2006"), no seconds, two- or four-digit years, numeric or named zones, a
# trailing comment such as "(UTC)" (ignored: the match need not reach the end).
# Digits are ASCII 0-9 ([0-9], never \d: in a str pattern that matches
# Arabic-Indic and other digits too, which int() then reads).
_DATE = re.compile(
    r"\s*(?:[A-Za-z]+,?\s*)?"
    r"([0-9]{1,2})[\s-]+([A-Za-z]{3})[A-Za-z]*\.?[\s-]+([0-9]{2,4})\s+"
    r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?(?:\.[0-9]+)?"
    r"\s*(?:([+-])([0-9]{2}):?([0-9]{2})|([A-Za-z]+))?"
)
# The form nearly every post's date has, "Mon, 02 Jan 2006 15:04:05 +0000": read
# first, by a pattern of fixed shape that matches in half the time of _DATE (nearly
# every line's date is new to the cache), with the groups _DATE would give it.
_USUAL_DATE = re.compile(
    r"[A-Za-z]{3}, ([0-9]{2}) ([A-Za-z]{3}) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) "
    r"([+-])([0-9]{2})([0-9]{2})"
)
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}
# RFC 5322 4.3 zone names and a few European ones common in Usenet headers, in
# seconds east of UTC. Any other name (military letters, local abbreviations)
# counts as UTC, as RFC 5322 says of military zones.
_ZONES = {
    "ut": 0,
    "utc": 0,
    "gmt": 0,
    "z": 0,
    "est": -5 * 3600,
    "edt": -4 * 3600,
    "cst": -6 * 3600,
    "cdt": -5 * 3600,
    "mst": -7 * 3600,
    "mdt": -6 * 3600,
    "pst": -8 * 3600,
    "pdt": -7 * 3600,
    "cet": 1 * 3600,
    "cest": 2 * 3600,
    "bst": 1 * 3600,
}
_EPOCH_ORDINAL = _calendar_date(1970, 1, 1).toordinal()
# Posts arrive in bursts: many share a date string, nearly all share a day.
_CACHE_LIMIT = 1 << 16
_MISSING = object()
_date_cache: dict[str, int | None] = {}
_day_cache: dict[tuple[str, str, str], int | None] = {}


def parse_date(text: str) -> int | None:
    """Unix time of an RFC 5322 style date header, or None when it is not a date."""
    cached = _date_cache.get(text, _MISSING)
    if cached is not _MISSING:
        return cached  # type: ignore[return-value]
    seconds = _parse_date_uncached(text)
    if len(_date_cache) >= _CACHE_LIMIT:
        _date_cache.clear()
    _date_cache[text] = seconds
    return seconds


def _parse_date_uncached(text: str) -> int | None:
    usual = _USUAL_DATE.match(text)
    if usual is not None:
        day, month, year, hour, minute, second, sign, zone_hours, zone_minutes = usual.groups()
        days = _days_since_epoch(day, month, year)
        hours, minutes, seconds = int(hour), int(minute), int(second)
        if days is None or hours > 23 or minutes > 59 or seconds > 60:
            return None
        offset = int(zone_hours) * 3600 + int(zone_minutes) * 60
        if sign == "-":
            offset = -offset
        return days * 86400 + hours * 3600 + minutes * 60 + seconds - offset
    return _parse_date_by_pattern(text)


def _parse_date_by_pattern(text: str) -> int | None:
    match = _DATE.match(text)
    if match is None:
        return _parse_date_fallback(text)
    day, month, year, hour, minute, second, sign, zone_hours, zone_minutes, zone_name = (
        match.groups()
    )
    days = _days_since_epoch(day, month, year)
    hours, minutes = int(hour), int(minute)
    seconds = int(second) if second else 0
    # It has the shape of a date, so the fallback would read it no better.
    if days is None or hours > 23 or minutes > 59 or seconds > 60:
        return None
    if sign:
        offset = int(zone_hours) * 3600 + int(zone_minutes) * 60
        if sign == "-":
            offset = -offset
    elif zone_name:
        offset = _ZONES.get(zone_name.lower(), 0)
    else:
        offset = 0
    return days * 86400 + hours * 3600 + minutes * 60 + seconds - offset


def _days_since_epoch(day: str, month: str, year: str) -> int | None:
    key = (day, month, year)
    days = _day_cache.get(key, _MISSING)
    if days is _MISSING:
        days = _count_days(day, month, year)
        if len(_day_cache) >= _CACHE_LIMIT:
            _day_cache.clear()
        _day_cache[key] = days
    return days  # type: ignore[return-value]


def _count_days(day: str, month: str, year: str) -> int | None:
    month_number = _MONTHS.get(month.lower())
    if month_number is None:
        return None
    full_year = int(year)
    if len(year) == 2:  # RFC 5322 4.3: 00-49 are 2000-2049, 50-99 are 1950-1999
        full_year += 2000 if full_year < 50 else 1900
    elif len(year) == 3:
        full_year += 1900
    try:
        return _calendar_date(full_year, month_number, int(day)).toordinal() - _EPOCH_ORDINAL
    except ValueError:  # 31 Feb, year 0
        return None


def _parse_date_fallback(text: str) -> int | None:
    # email.utils reads its numbers with int(), which takes Arabic-Indic digits too.
    if not text.isascii():
        return None
    parsed = parsedate_tz(text)
    if parsed is None:
        return None
    try:
        return int(mktime_tz(parsed))
    except (OverflowError, ValueError, TypeError):
        return None
