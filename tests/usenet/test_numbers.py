"""The one reading of a whole number from someone else's text (usenet/numbers.py):
ASCII digits 0-9, at most MAX_DIGITS of them, within the caller's bounds."""

from __future__ import annotations

from unittest import mock

import pytest

from usenet import numbers
from usenet.numbers import MAX_DIGITS, NotANumber, ascii_digits, whole_number

HUGE = "1" + "0" * 100_000  # 10**100000: int() would refuse it (Python 3.11) or build it
ARABIC_ONE = "\u0661"  # isdigit() is true, and int() reads it as 1


@pytest.mark.parametrize(
    ("text", "low", "expected"),
    [("0", 0, 0), ("42", 0, 42), (" 42\t\r\n", 0, 42), ("007", 0, 7), ("-5", -10, -5),
     (b"123", 0, 123), ("9" * MAX_DIGITS, 0, 10**MAX_DIGITS - 1)],
)  # fmt: skip
def test_ascii_digits_are_a_number(text, low, expected):
    assert whole_number(text, low=low, high=10**MAX_DIGITS) == expected


@pytest.mark.parametrize(
    "text",
    ["", " ", "²", "³", ARABIC_ONE, "\u0661\u0662", "1²", "\u06637", "+1", "-1", "1_000",
     "1.0", "1e3", "0x10", "1 2", "\u200912", "12\u00a0", "1" * (MAX_DIGITS + 1), HUGE, "-",
     b"\xb2", "\uff11\uff12"],
)  # fmt: skip
def test_anything_else_is_not_a_number(text):
    with pytest.raises(NotANumber) as refused:
        whole_number(text, high=10**MAX_DIGITS)
    assert "whole number" in str(refused.value)


@pytest.mark.parametrize(("text", "low", "high"), [("11", 1, 10), ("0", 1, 10), ("-11", -10, 0)])
def test_a_number_outside_the_bounds_is_refused_with_them(text, low, high):
    with pytest.raises(NotANumber) as refused:
        whole_number(text, low=low, high=high)
    assert refused.value.expected == f"a whole number from {low} to {high}"


def test_no_long_number_is_ever_built():
    built: list[str] = []

    def counting_int(text: str) -> int:
        built.append(text)
        return int(text)

    with mock.patch.object(numbers, "int", counting_int, create=True):
        for text in (HUGE, "-" + HUGE, "0" * 50, "12"):
            try:
                whole_number(text, low=-10, high=100)
            except NotANumber:
                pass
    assert built == ["12"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0", True), ("123", True), (b"123", True), ("9" * MAX_DIGITS, True), ("", False),
     ("9" * (MAX_DIGITS + 1), False), ("²", False), (ARABIC_ONE, False), (b"\xb2", False),
     (" 1", False), ("-1", False)],
)  # fmt: skip
def test_ascii_digits_are_digits_0_to_9_alone_and_few(text, expected):
    assert ascii_digits(text) is expected


@pytest.mark.parametrize(
    ("text", "above"),
    [("101", True), (HUGE, True), (" " + HUGE, True), ("0" * 50, False), ("-" + HUGE, False),
     ("²", False), ("1" + ARABIC_ONE * 30, False), ("1" * 30 + "x", False)],
)  # fmt: skip
def test_a_refusal_says_whether_the_text_was_a_number_past_the_bounds(text, above):
    with pytest.raises(NotANumber) as refused:
        whole_number(text, low=-100, high=100)
    assert refused.value.above is above


@pytest.mark.parametrize(
    ("text", "expected"),
    [("5", 5.0), ("5.", 5.0), (".5", 0.5), ("99.5", 99.5), (" 7 ", 7.0), ("100", 100.0)],
)
def test_a_decimal_is_ascii_digits_with_at_most_one_point(text, expected):
    assert numbers.decimal_number(text, low=0, high=100) == expected


@pytest.mark.parametrize(
    "text",
    [
        "\u0661\u0660",
        "1_0",
        "1e1",
        "inf",
        "nan",
        "+1",
        "-1",
        "1.2.3",
        ".",
        "",
        "1 0",
        "²",
        "0" * 21,
    ],
)
def test_anything_else_is_no_decimal(text):
    # float() reads the first four (10, 10, 10, infinity) and "nan", "+1" and " 1 ".
    with pytest.raises(NotANumber, match="a decimal number from 0 to 100"):
        numbers.decimal_number(text, low=0, high=100)


def test_a_decimal_outside_the_bounds_is_refused_with_them():
    with pytest.raises(NotANumber) as refused:
        numbers.decimal_number("100.5", low=0, high=100)
    assert refused.value.above and refused.value.expected == "a decimal number from 0 to 100"
    assert numbers.decimal_number("-0.5", low=-1, high=0) == -0.5
