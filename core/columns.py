"""Integer model fields whose form fields are bounded by their PostgreSQL column.

Django's model IntegerField knows its column's range (its validators hold it),
but its form field has no `max_value`: a form that is not a ModelForm, or a
page that reads the form field alone, took 99999999999 for an int4 column,
which psycopg's binary dumper wrapped to 1215752191 without a word (and
2147483648 to a negative number the column's CHECK refused: a 500). These
fields give their form fields the column's bounds (`min_value`, `max_value`)
and are otherwise Django's own: they deconstruct as Django's classes, so no
migration changes. Every integer field of the project's models is one of
them (tests/security/test_numbers.py walks them all). docs/security.md,
"Numbers from clients".
"""

from __future__ import annotations

from typing import Any

from django.db import connection, models

INT4_MAX = 2**31 - 1
INT8_MAX = 2**63 - 1


def column_bounds(field: models.Field) -> tuple[int, int]:
    """The smallest and largest number an integer field's column holds."""
    low, high = connection.ops.integer_field_range(field.get_internal_type())
    return low, high


class _ColumnBounded:
    """A mixin for an integer model field: its form field gets its column's range."""

    def formfield(self, **kwargs: Any) -> Any:
        low, high = column_bounds(self)  # type: ignore[arg-type]
        return super().formfield(**{"min_value": low, "max_value": high, **kwargs})  # type: ignore[misc]

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()  # type: ignore[misc]
        django_field = next(
            base for base in type(self).__mro__ if base.__module__.startswith("django.db.models")
        )
        return name, f"django.db.models.{django_field.__name__}", args, kwargs


class IntegerField(_ColumnBounded, models.IntegerField):  # type: ignore[misc]
    """An int4 column: -2147483648 … 2147483647."""


class SmallIntegerField(_ColumnBounded, models.SmallIntegerField):  # type: ignore[misc]
    """An int2 column: -32768 … 32767."""


class BigIntegerField(_ColumnBounded, models.BigIntegerField):  # type: ignore[misc]
    """An int8 column (Django bounds its form field already; here for one rule)."""


class PositiveIntegerField(_ColumnBounded, models.PositiveIntegerField):  # type: ignore[misc]
    """An int4 column with a CHECK of >= 0: 0 … 2147483647."""
