"""Serializer fields that read a client's text strictly.

`WholeNumberField` is DRF's IntegerField with the one reading of a number
(usenet.numbers): ASCII digits 0-9 in a query string or a JSON string, a JSON
integer as it is. DRF's own field calls int() on the text, which reads "١٢"
(Arabic-Indic digits) as 12, and "12.0", "+12" and "1_000" as numbers; here
each is a 400 naming the field. Every input serializer uses it (a test holds
them to it); output serializers keep IntegerField, which only documents.
`DecimalNumberField` is the same for a decimal (float() reads "\u0661\u0660" and "1_0"
as 10 too): usenet.numbers.decimal_number.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from usenet.limits import MAX_BIGINT
from usenet.numbers import NotANumber, decimal_number, whole_number


class WholeNumberField(serializers.IntegerField):
    default_error_messages = {
        "invalid": "is not a whole number: send ASCII digits 0-9 (a leading - if negative).",
    }

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool):  # JSON true is no number, though bool is an int in Python
            self.fail("invalid")
        if isinstance(data, int):
            return data
        if not isinstance(data, str):  # 12.0 included: a whole number is written without a point
            self.fail("invalid")
        try:
            return whole_number(data, low=-MAX_BIGINT - 1, high=MAX_BIGINT)
        except NotANumber:
            self.fail("invalid")


class DecimalNumberField(serializers.FloatField):
    default_error_messages = {
        "invalid": "is not a decimal number: send ASCII digits 0-9 with at most one '.'.",
    }

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool):  # JSON true is no number
            self.fail("invalid")
        if isinstance(data, int | float):  # a JSON number, as it is (json refuses NaN here)
            if data != data or data in (float("inf"), float("-inf")):
                self.fail("invalid")
            return float(data)
        if not isinstance(data, str):
            self.fail("invalid")
        try:  # wide: the field's min_value and max_value say the rest
            return decimal_number(data, low=-float(MAX_BIGINT), high=float(MAX_BIGINT))
        except NotANumber:
            self.fail("invalid")
