"""Integer arrays sent to PostgreSQL in its binary array format, packed in C.

psycopg dumps a Python list element by element (about 10 ms for 50,000
integers in binary, or quoting each one in text). A batch merge sends
three lists of 50,000 integers, so `Int4Array` and `Int8Array` pack a whole
list at once with the `array` module instead. The layout is PostgreSQL's
`array_send`: ndim, has-nulls flag, element type oid, then per dimension its
length and lower bound, then per element its length and its big-endian value.

Pass them as parameters of a query run in binary (`Queries.fetchone_bound`):

    catalog_sql.fetchone_bound("merge_files", {"parts": Int4Array(parts)})

Importing this module registers their dumpers with psycopg's global adapters,
so every connection opened afterwards can send them. Django's query logging
(DEBUG, or tests counting queries) writes parameters into the query text, so
they dump as array literals in text too.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Sequence

import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import AdaptersMap, Dumper
from psycopg.pq import Format

__all__ = ["Int4Array", "Int8Array", "register_dumpers"]

INT4_OID, INT8_OID = 23, 20
INT4_ARRAY_OID, INT8_ARRAY_OID = 1007, 1016

_SWAP = sys.byteorder == "little"


def _word(value: int) -> int:
    """The native int32 whose bytes are `value` big-endian (for array('i'))."""
    return int.from_bytes(value.to_bytes(4, "big"), sys.byteorder, signed=True)


_LENGTH_4, _LENGTH_8 = _word(4), _word(8)


def _header(element_oid: int, count: int) -> bytes:
    if count == 0:
        return struct.pack("!iiI", 0, 0, element_oid)
    return struct.pack("!iiIii", 1, 0, element_oid, count, 1)


class Int4Array:
    """A one-dimensional int4[] parameter; values must fit in 32 bits."""

    __slots__ = ("data", "values")

    def __init__(self, values: Sequence[int]) -> None:
        self.values = values
        count = len(values)
        try:
            body = array("i", values)
        except OverflowError:
            raise ValueError("Int4Array: a value does not fit in 32 bits.") from None
        if _SWAP:
            body.byteswap()
        words = array("i", [_LENGTH_4]) * (2 * count)
        words[1::2] = body
        self.data = _header(INT4_OID, count) + words.tobytes()


class Int8Array:
    """A one-dimensional int8[] parameter; values must fit in 64 bits."""

    __slots__ = ("data", "values")

    def __init__(self, values: Sequence[int]) -> None:
        self.values = values
        count = len(values)
        try:
            body = array("q", values)
        except OverflowError:
            raise ValueError("Int8Array: a value does not fit in 64 bits.") from None
        if _SWAP:
            body.byteswap()
        # The big-endian 8 bytes of each value as two 4-byte words, each
        # value preceded by its length word.
        halves = array("i")
        halves.frombytes(body.tobytes())
        words = array("i", [_LENGTH_8]) * (3 * count)
        words[1::3] = halves[0::2]
        words[2::3] = halves[1::2]
        self.data = _header(INT8_OID, count) + words.tobytes()


class _Int4ArrayDumper(Dumper):
    format = Format.BINARY
    oid = INT4_ARRAY_OID

    def dump(self, obj: Int4Array) -> Buffer:
        return obj.data


class _Int8ArrayDumper(Dumper):
    format = Format.BINARY
    oid = INT8_ARRAY_OID

    def dump(self, obj: Int8Array) -> Buffer:
        return obj.data


def _literal(values: Sequence[int]) -> bytes:
    return ("{" + ",".join(map(str, values)) + "}").encode()


class _Int4ArrayTextDumper(Dumper):
    oid = INT4_ARRAY_OID

    def dump(self, obj: Int4Array) -> Buffer:
        return _literal(obj.values)


class _Int8ArrayTextDumper(Dumper):
    oid = INT8_ARRAY_OID

    def dump(self, obj: Int8Array) -> Buffer:
        return _literal(obj.values)


def register_dumpers(context: AdaptersMap) -> None:
    """Let `context` (psycopg's global adapters, a connection's or a cursor's) send them."""
    context.register_dumper(Int4Array, _Int4ArrayDumper)
    context.register_dumper(Int8Array, _Int8ArrayDumper)
    context.register_dumper(Int4Array, _Int4ArrayTextDumper)
    context.register_dumper(Int8Array, _Int8ArrayTextDumper)


register_dumpers(psycopg.adapters)
