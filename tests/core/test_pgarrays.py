"""Integer arrays packed in PostgreSQL's binary format arrive as the same values."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from core.pgarrays import Int4Array, Int8Array
from core.sql import binary_placeholders

INT4 = st.integers(-(2**31), 2**31 - 1)
INT8 = st.integers(-(2**63), 2**63 - 1)


def round_trip(query: str, value: object) -> object:
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(query, {"value": value}, binary=True)
        row = cursor.fetchone()
    assert row is not None
    return row[0]


@pytest.mark.slow
@pytest.mark.django_db
@settings(max_examples=60, deadline=None)
@given(values=st.lists(INT4, max_size=300))
def test_int4_arrays_arrive_unchanged(values: list[int]) -> None:
    assert round_trip("SELECT %(value)b::int[]", Int4Array(values)) == values


@pytest.mark.slow
@pytest.mark.django_db
@settings(max_examples=60, deadline=None)
@given(values=st.lists(INT8, max_size=300))
def test_int8_arrays_arrive_unchanged(values: list[int]) -> None:
    assert round_trip("SELECT %(value)b::bigint[]", Int8Array(values)) == values


@pytest.mark.django_db
def test_the_server_sees_a_typed_one_dimensional_array() -> None:
    packed = Int4Array([10, 20, 30, 40])
    assert round_trip("SELECT pg_typeof(%(value)b)::text", packed) == "integer[]"
    assert round_trip("SELECT array_dims(%(value)b)", packed) == "[1:4]"
    assert round_trip("SELECT (%(value)b::int[])[2:3]", packed) == [20, 30]
    assert round_trip("SELECT array_dims(%(value)b)", Int8Array([])) is None


@pytest.mark.django_db
def test_the_text_form_used_by_query_logging_is_an_array_literal() -> None:
    connection.ensure_connection()
    with psycopg.ClientCursor(connection.connection) as cursor:
        query = cursor.mogrify("SELECT %s, %s", (Int4Array([1, -2]), Int8Array([2**40])))
        cursor.execute(query)
        assert cursor.fetchone() == ([1, -2], [2**40])


def test_values_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="32 bits"):
        Int4Array([2**31])
    with pytest.raises(ValueError, match="64 bits"):
        Int8Array([-(2**63) - 1])


def test_binary_queries_swap_every_placeholder_and_no_literal() -> None:
    query = "SELECT %(a)s::int[], %(b)s, '%%(c)s', '100%%', %%%(d)s"
    assert binary_placeholders(query) == ("SELECT %(a)b::int[], %(b)b, '%%(c)s', '100%%', %%%(d)b")
