"""Serializer fields that read a client's text strictly.

`WholeNumberField` is DRF's IntegerField with the one reading of a number
(usenet.numbers): ASCII digits 0-9 in a query string or a JSON string, a JSON
integer as it is. DRF's own field calls int() on the text, which reads "١٢"
(Arabic-Indic digits) as 12, and "12.0", "+12" and "1_000" as numbers; here
each is a 400 naming the field. Every input serializer uses it (a test holds
them to it); output serializers keep IntegerField, which only documents.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from usenet.limits import MAX_BIGINT
from usenet.numbers import NotANumber, whole_number


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
