"""Integer arrays sent to PostgreSQL in its binary array format, packed in C.

`Int4Array` and `Int8Array` pack a whole list at once with the `array` module;
pass them to a query run in binary (`Queries.fetchone_bound`). Importing this
module registers their dumpers (docs/catalog.md, "Parameters in binary").
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Sequence

import psycopg
from psycopg.abc import AdaptContext, Buffer
from psycopg.adapt import AdaptersMap, Dumper
from psycopg.pq import Format

__all__ = ["Int4Array", "Int8Array", "register_dumpers"]

_SWAP = sys.byteorder == "little"


class _PackedArray:
    """A one-dimensional integer array parameter, packed once when made."""

    __slots__ = ("data", "values")
    typecode = ""  # the `array` module's code for the element type
    element_oid = array_oid = 0

    def __init__(self, values: Sequence[int]) -> None:
        self.values = values
        try:
            body = array(self.typecode, values)
        except OverflowError:
            bits = 8 * array(self.typecode).itemsize
            raise ValueError(
                f"{type(self).__name__}: a value does not fit in {bits} bits."
            ) from None
        if _SWAP:
            body.byteswap()
        # Each value's big-endian bytes as 4-byte words, after a word holding
        # its length (also big-endian, read back as a native int32).
        per_value = body.itemsize // 4
        value_words = array("i")
        value_words.frombytes(body.tobytes())
        length = int.from_bytes(body.itemsize.to_bytes(4, "big"), sys.byteorder, signed=True)
        count = len(body)
        words = array("i", [length]) * ((1 + per_value) * count)
        for word in range(per_value):
            words[1 + word :: 1 + per_value] = value_words[word::per_value]
        if count == 0:
            header = struct.pack("!iiI", 0, 0, self.element_oid)
        else:
            header = struct.pack("!iiIii", 1, 0, self.element_oid, count, 1)
        self.data = header + words.tobytes()


class Int4Array(_PackedArray):
    """An int4[] parameter; values must fit in 32 bits."""

    __slots__ = ()
    typecode = "i"
    element_oid, array_oid = 23, 1007


class Int8Array(_PackedArray):
    """An int8[] parameter; values must fit in 64 bits."""

    __slots__ = ()
    typecode = "q"
    element_oid, array_oid = 20, 1016


class _BinaryDumper(Dumper):
    format = Format.BINARY

    def __init__(self, cls: type, context: AdaptContext | None = None) -> None:
        super().__init__(cls, context)
        self.oid = cls.array_oid  # type: ignore[attr-defined]

    def dump(self, obj: _PackedArray) -> Buffer:
        return obj.data


class _TextDumper(_BinaryDumper):
    format = Format.TEXT

    def dump(self, obj: _PackedArray) -> Buffer:
        return ("{" + ",".join(map(str, obj.values)) + "}").encode()


def register_dumpers(context: AdaptersMap) -> None:
    """Let `context` (psycopg's global adapters, a connection's or a cursor's) send them."""
    for cls in (Int4Array, Int8Array):
        context.register_dumper(cls, _BinaryDumper)
        context.register_dumper(cls, _TextDumper)


register_dumpers(psycopg.adapters)
