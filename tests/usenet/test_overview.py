from __future__ import annotations

import pytest

from tests.support.overview_lines import over_line
from usenet.limits import MAX_POSTER, MAX_SUBJECT
from usenet.overview import Overview, parse_date, parse_over_line


def test_a_full_overview_line_gives_its_fields():
    line = over_line(123456, '[01/12] - "name.part01.rar" yEnc (1/37)', message_id="<m@h>")
    assert parse_over_line(line) == Overview(
        article=123456,
        subject='[01/12] - "name.part01.rar" yEnc (1/37)',
        poster="someone <a@b.c>",
        date=1700000000,
        message_id="<m@h>",
        bytes=739811,
    )


def test_a_line_with_only_the_mandatory_fields_and_bare_lf_parses():
    line = b"7\tsubject (1/2)\tme <me@x>\t14 Nov 2023 22:13:20 GMT\t<a@b>\t<r@x>\t100\t2\n"
    overview = parse_over_line(line)
    assert overview is not None
    assert (overview.article, overview.date, overview.bytes) == (7, 1700000000, 100)


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"\r\n",
        b"123\tonly\tfour\tfields\r\n",
        b"12a\tsubject\tposter\tdate\t<m@h>\t\t100\t2\r\n",
        b"+12\tsubject\tposter\tdate\t<m@h>\t\t100\t2\r\n",
        b"1_000\tsubject\tposter\tdate\t<m@h>\t\t100\t2\r\n",
        b"\xc2\xb2\tsubject\tposter\tdate\t<m@h>\t\t100\t2\r\n",  # superscript two
        "\u0661\u0662\tsubject\tposter\tdate\t<m@h>\t\t100\t2\r\n".encode(),  # Arabic-Indic 12
        "12\tsubject\tposter\tdate\t<m@h>\t\t\u0661\t2\r\n".encode(),  # Arabic-Indic bytes
        b"1" * 21 + b"\tsubject\tposter\tdate\t<m@h>\t\t100\t2\r\n",  # past any article number
        b"12\tsubject\tposter\tdate\t<m@h>\t\tlots\t2\r\n",
        b"12\tsubject\tposter\tdate\tno-brackets@h\t\t100\t2\r\n",
        b"12\tsubject\tposter\tdate\t\t\t100\t2\r\n",
    ],
)
def test_malformed_lines_give_none(line):
    assert parse_over_line(line) is None


def test_an_empty_byte_count_reads_as_zero():
    overview = parse_over_line(b"12\ts (1/1)\tp\tjunk\t<m@h>\t\t\t\r\n")
    assert overview is not None
    assert overview.bytes == 0
    assert overview.date is None


def test_a_latin1_subject_beside_a_utf8_poster_decodes_each_right():
    line = b"5\tCaf\xe9 (1/2)\tJos\xc3\xa9 <j@x>\t14 Nov 2023 22:13:20 GMT\t<m@h>\t\t1\t1\r\n"
    overview = parse_over_line(line)
    assert overview is not None
    assert overview.subject == "Café (1/2)"
    assert overview.poster == "José <j@x>"


def test_different_undecodable_bytes_stay_different():
    first = parse_over_line(b"5\tname\xe9 (1/2)\tp\td\t<m@h>\t\t1\t1")
    second = parse_over_line(b"5\tname\xe8 (1/2)\tp\td\t<m@h>\t\t1\t1")
    assert first is not None and second is not None
    assert first.subject != second.subject


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tue, 14 Nov 2023 22:13:20 +0000", 1700000000),
        ("14 Nov 2023 22:13:20 +0000", 1700000000),
        ("Tue, 14 Nov 2023 22:13:20 GMT", 1700000000),
        ("Tue, 14 Nov 2023 22:13:20 UTC", 1700000000),
        ("Tue, 14 Nov 2023 22:13:20 +0000 (UTC)", 1700000000),
        ("Tue, 14 Nov 2023 23:13:20 +0100", 1700000000),
        ("Tue, 14 Nov 2023 14:13:20 PST", 1700000000),
        ("Tue, 14 Nov 2023 17:13:20 -05:00", 1700000000),
        ("Tue, 14 Nov 2023 22:13 +0000", 1700000000 - 20),
        ("Tue, 14 Nov 23 22:13:20 +0000", 1700000000),
        ("Sat, 01 Jan 00 00:00:00 GMT", 946684800),
        ("Fri, 31 Dec 99 23:59:59 GMT", 946684799),
        ("Tuesday, 14-Nov-23 22:13:20 GMT", 1700000000),
        ("  Tue,  14 Nov 2023 22:13:20 +0000", 1700000000),
        ("Tue, 14 nov 2023 22:13:20 +0000", 1700000000),
    ],
)
def test_dates_in_their_common_forms(text, expected):
    assert parse_date(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "Tue, 31 Feb 2023 10:00:00 +0000",
        "Tue, 14 Foo 2023 22:13:20 +0000",
        "Tue, 14 Nov 2023 25:13:20 +0000",
        "14 Nov",
    ],
)
def test_junk_dates_give_none(text):
    assert parse_date(text) is None


def test_a_cached_date_reads_the_same_the_second_time():
    text = "Wed, 15 Nov 2023 00:00:00 +0000"
    assert parse_date(text) == parse_date(text) == 1700006400


def test_a_subject_or_poster_over_the_stored_limit_is_malformed():
    # The coordinator would refuse the file anyway; the length is what a hostile
    # poster has to slow the rules with, so the line is dropped before them.
    assert parse_over_line(over_line(1, "x" * MAX_SUBJECT + " (1/2)")) is None
    assert parse_over_line(over_line(1, "x" * (MAX_SUBJECT - 6) + " (1/2)")) is not None
    assert parse_over_line(over_line(1, "x (1/2)", poster="p" * (MAX_POSTER + 1))) is None
    assert parse_over_line(over_line(1, "x (1/2)", poster="p" * MAX_POSTER)) is not None
