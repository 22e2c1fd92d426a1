"""parse_date (usenet.overview): the fast path, the tolerant fallback and junk."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from usenet.overview import parse_date

BASE = calendar.timegm((2006, 1, 2, 15, 4, 5, 0, 0, 0))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mon, 02 Jan 2006 15:04:05 +0000", BASE),
        ("02 Jan 2006 15:04:05 +0000", BASE),
        ("Mon, 2 Jan 2006 15:04:05 GMT", BASE),
        ("Mon, 02 Jan 2006 15:04:05 UTC", BASE),
        ("Mon, 02 Jan 2006 10:04:05 EST", BASE),
        ("Mon, 02 Jan 2006 17:04:05 +0200", BASE),
        ("Mon, 02 Jan 2006 15:04 +0000", BASE - 5),
        ("Mon, 02 Jan 06 15:04:05 +0000", BASE),
        ("Sat, 02 Jan 99 15:04:05 +0000", calendar.timegm((1999, 1, 2, 15, 4, 5, 0, 0, 0))),
        ("Mon, 02 Jan 2006 15:04:05", BASE),
        ("Monday, 02-Jan-06 15:04:05 GMT", BASE),
        ("  Mon, 02 Jan 2006 15:04:05 +0000 (UTC)", BASE),
    ],
)
def test_usual_and_odd_forms(text, expected):
    assert parse_date(text) == expected


@pytest.mark.parametrize(
    "junk",
    ["", "garbage", "yesterday", "Mon, 31 Feb 2006 10:00:00 +0000", "Mon, 02 Jan 2006 25:00:00"],
)
def test_junk_gives_none(junk):
    assert parse_date(junk) is None


@given(st.datetimes(min_value=datetime(1980, 1, 1), max_value=datetime(2090, 1, 1)))
def test_agrees_with_the_standard_library_on_rfc5322_dates(moment):
    moment = moment.replace(microsecond=0, tzinfo=UTC)
    assert parse_date(format_datetime(moment)) == int(moment.timestamp())


@given(st.text(max_size=60))
def test_never_raises_on_any_text(text):
    result = parse_date(text)
    assert result is None or isinstance(result, int)


@pytest.mark.parametrize(
    "text",
    [
        "Mon, \u0660\u0662 Jan \u0662\u0660\u0660\u0666 15:04:05 +0000",  # the day and year
        "Mon, 02 Jan 2006 \u0661\u0665:04:05 +0000",  # the hour
        "\u0660\u0662 Jan 2006 15:04:05",  # and the fallback's forms
        "2 Jan \u0662\u0660\u0660\u0666 15:04",
    ],
)
def test_a_date_in_other_digits_is_no_date(text):
    # \d in a str pattern, and email.utils' int(), read Arabic-Indic digits as 0-9.
    assert parse_date(text) is None


def test_a_zone_in_other_digits_is_no_offset():
    # The zone is optional (a trailing comment is ignored): UTC, not +02:00.
    assert parse_date("Mon, 02 Jan 2006 15:04:05 +\u0660\u0662\u0660\u0660") == BASE


# The usual form with each position drawn from what could sit there, and a little more.
_USUAL_POSITIONS = [
    "MSx\u00e9", "oau", "nt", ",;", " -",
    "0123\u0661", "0129", " -", "JFDx", "aeE\u00e9", "nbcq", " .",
    "12", "09", "09", "069", " ", "0129", "0359", ":", "05", "09", ":", "056", "09", " ",
    "+-G", "01", "05", "03", "09",
]  # fmt: skip


@given(
    st.tuples(*(st.sampled_from(characters) for characters in _USUAL_POSITIONS)),
    st.sampled_from(["", " (UTC)", "0", "x", " "]),
)
def test_the_usual_form_reads_as_the_general_pattern_reads_it(characters, tail):
    from usenet.overview import _parse_date_by_pattern, _parse_date_uncached

    text = "".join(characters) + tail
    assert _parse_date_uncached(text) == _parse_date_by_pattern(text), text
