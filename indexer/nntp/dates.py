"""Unix time of the Date field of an overview line.

A seed node parses about 150,000 overview lines a second, so the common
RFC 5322 form is handled by one precompiled regex and integer arithmetic;
anything odd goes to `email.utils.parsedate_tz`. Junk gives None rather
than an exception: one bad Date must not stop an index run.
"""

from __future__ import annotations

import calendar
import re
from email.utils import parsedate_tz
from functools import lru_cache

_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}

# Zones that RFC 5322 names, plus the ones seen on Usenet in practice.
_NAMED_ZONES = {
    "UT": 0, "UTC": 0, "GMT": 0, "Z": 0,
    "EST": -5 * 3600, "EDT": -4 * 3600, "CST": -6 * 3600, "CDT": -5 * 3600,
    "MST": -7 * 3600, "MDT": -6 * 3600, "PST": -8 * 3600, "PDT": -7 * 3600,
    "CET": 3600, "CEST": 7200, "BST": 3600,
}  # fmt: skip

_DATE = re.compile(
    rb"\s*(?:[A-Za-z]{3},?\s*)?"  # optional weekday
    rb"(\d{1,2})\s+([A-Za-z]{3})[a-z]*\s+(\d{2,4})\s+"
    rb"(\d{1,2}):(\d{2})(?::(\d{2}))?"
    rb"(?:\s*([+-])(\d{2})(\d{2})|\s*([A-Za-z]{1,5}))?"
)


@lru_cache(maxsize=4096)
def _day_start(year: int, month: int, day: int) -> int:
    # Articles of one run share few days, so this cache nearly always hits.
    return calendar.timegm((year, month, day, 0, 0, 0, 0, 0, 0))


def _is_real_day(year: int, month: int, day: int) -> bool:
    # Years outside this range are typos or spam; Usenet began in 1980.
    if not 1900 <= year <= 9999:
        return False
    return day <= 28 or day <= calendar.monthrange(year, month)[1]


def _full_year(year: int, digits: int) -> int:
    # RFC 5322 section 4.3: 00-49 are 2000s, 50-99 and three digits are 1900s.
    if digits == 2:
        return year + 2000 if year < 50 else year + 1900
    if digits == 3:
        return year + 1900
    return year


def parse_date(text: str | bytes) -> int | None:
    """Unix time of an RFC 5322 / RFC 3977 overview Date, or None if it makes no sense."""
    raw = text.encode("latin-1", "replace") if isinstance(text, str) else text
    match = _DATE.match(raw)
    if match is None:
        return _parse_date_slowly(raw)
    day_s, month_s, year_s, hour_s, minute_s, second_s, sign, tz_h, tz_m, zone = match.groups()
    month = _MONTHS.get(month_s[:3].lower().decode("ascii"))
    if month is None:
        return _parse_date_slowly(raw)
    day, hour, minute = int(day_s), int(hour_s), int(minute_s)
    second = int(second_s) if second_s else 0
    if not (1 <= day <= 31 and hour < 24 and minute < 60 and second <= 60):
        return None
    year = _full_year(int(year_s), len(year_s))
    if sign:
        offset = int(tz_h) * 3600 + int(tz_m) * 60
        if sign == b"-":
            offset = -offset
    elif zone:
        # Unknown zone names count as UTC, as RFC 5322 says for obsolete zones.
        offset = _NAMED_ZONES.get(zone.upper().decode("ascii"), 0)
    else:
        offset = 0
    if not _is_real_day(year, month, day):
        return None
    return _day_start(year, month, day) + hour * 3600 + minute * 60 + second - offset


def _parse_date_slowly(raw: bytes) -> int | None:
    try:
        parsed = parsedate_tz(raw.decode("latin-1"))
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    year, month, day, hour, minute, second = parsed[:6]
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second <= 60):
        return None
    if not _is_real_day(year, month, day):
        return None
    offset = parsed[9] or 0
    return _day_start(year, month, day) + hour * 3600 + minute * 60 + second - offset
