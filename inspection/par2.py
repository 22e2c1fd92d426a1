"""par2 packets read for the names, sizes and MD5s of the files a recovery set covers.

A par2 file is a run of packets, each ``PAR2\\0PKT``, its length (a multiple
of 4, the 64-byte header included), the MD5 of everything after that MD5
field, the recovery set id and the type. Packets are found by their magic, so
garbage between them (a damaged article, a mangled yEnc part) is skipped: the
scan moves forward only, never reading the same bytes for the magic twice. A
packet counts only when its length fits in the bytes there are and its MD5
matches; the MD5 work spent on packets that fail is capped at a multiple of
the input's size (a run of fake headers each claiming the rest of the input
would otherwise cost its square). Two kinds are read: Main (the slice size and
the ids of the files in the set) and FileDesc (a file's id, MD5, MD5 of its
first 16 KiB, length and name); UniFileN gives a file's name in UTF-16 and
wins. Others are skipped by their length.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from .errors import Par2Error
from .steps import STEPS

__all__ = ["MAX_FILES", "MAX_PACKETS", "Par2File", "Par2Set", "parse"]

MAGIC = b"PAR2\0PKT"
HEADER = 64
MAX_PACKETS = 200_000  # a par2 index names each file in 2-3 packets
MAX_FILES = 10_000  # files named in one recovery set
MAX_NAME_BYTES = 4096  # a FileDesc name; file systems stop at 255-1024
MAX_INPUT = 64 << 20
FAILED_MD5_BUDGET = 4  # times the input's size hashed for packets that fail their MD5
FAILED_MD5_SLACK = 64 << 10  # and this much more, for small inputs

TYPE_MAIN = b"PAR 2.0\0Main\0\0\0\0"
TYPE_FILEDESC = b"PAR 2.0\0FileDesc"
TYPE_UNICODE_NAME = b"PAR 2.0\0UniFileN"

_HEAD = struct.Struct("<8sQ16s16s16s")
_FILEDESC = struct.Struct("<16s16s16sQ")
_MAIN = struct.Struct("<QI")


@dataclass(frozen=True, slots=True)
class Par2File:
    """A file the recovery set covers. Hashes in lowercase hex."""

    file_id: str
    name: str
    size: int
    md5: str
    hash16k: str


@dataclass(frozen=True, slots=True)
class Par2Set:
    """What the packets say: the files (in the main packet's order when there is one)."""

    set_id: str | None
    slice_size: int | None
    files: tuple[Par2File, ...]
    main_found: bool
    packets: int  # packets whose MD5 matched
    damaged: int  # packet headers found whose length or MD5 failed


def parse(data: bytes) -> Par2Set:
    """The recovery set the packets in data describe; Par2Error when there is none."""
    if len(data) > MAX_INPUT:
        raise Par2Error(f"The par2 data is {len(data)} bytes, more than the {MAX_INPUT} read.")
    reader = _Reader(data)
    reader.read()
    if reader.packets == 0:
        raise Par2Error("No par2 packet with a matching MD5 in the data.")
    main = reader.main
    return Par2Set(
        set_id=main[0].hex() if main else None,
        slice_size=main[1] if main else None,
        files=reader.files(),
        main_found=main is not None,
        packets=reader.packets,
        damaged=reader.damaged,
    )


class _Reader:
    """One forward pass over the data: the packets that check, by kind."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.view = memoryview(data)
        # MD5 work on packets that fail may total this much; good packets are skipped whole.
        self.failed_budget = FAILED_MD5_BUDGET * len(data) + FAILED_MD5_SLACK
        self.descs: dict[bytes, Par2File] = {}
        self.unicode_names: dict[bytes, str] = {}
        self.main: tuple[bytes, int, list[bytes]] | None = None
        self.packets = 0
        self.damaged = 0

    def read(self) -> None:
        data = self.data
        position = data.find(MAGIC)
        while position >= 0:
            STEPS.take()
            if self.packets + self.damaged >= MAX_PACKETS:
                raise Par2Error(f"More than {MAX_PACKETS} par2 packets: not a par2 index.")
            length = self._packet(position)
            if length:
                self.packets += 1
                position = data.find(MAGIC, position + length)
            else:
                self.damaged += 1
                position = data.find(MAGIC, position + len(MAGIC))

    def _packet(self, position: int) -> int:
        """The length of the checked packet at position, read; 0 if it does not check."""
        data = self.data
        if len(data) - position < HEADER:
            return 0
        _magic, length, digest, set_id, kind = _HEAD.unpack_from(data, position)
        if length < HEADER or length % 4 or length > len(data) - position:
            return 0
        STEPS.take(length)
        if hashlib.md5(self.view[position + 32 : position + length]).digest() != digest:  # noqa: S324 - par2's own hash
            self.failed_budget -= length
            if self.failed_budget < 0:
                raise Par2Error("Too many damaged par2 packets: the data is not a par2 file.")
            return 0
        body = self.view[position + HEADER : position + length]
        if kind == TYPE_MAIN and self.main is None:
            self.main = (set_id, *_main(body))
        elif kind == TYPE_FILEDESC:
            self._filedesc(body)
        elif kind == TYPE_UNICODE_NAME and len(body) >= 16:
            if len(self.unicode_names) < MAX_FILES:
                name = bytes(body[16 : 16 + 2 * MAX_NAME_BYTES]).decode("utf-16-le", "replace")
                self.unicode_names[bytes(body[:16])] = name.rstrip("\0")
        return length

    def _filedesc(self, body: memoryview) -> None:
        if len(body) < _FILEDESC.size:
            return
        file_id, md5, hash16k, size = _FILEDESC.unpack_from(body)
        if file_id not in self.descs and len(self.descs) >= MAX_FILES:
            raise Par2Error(f"More than {MAX_FILES} files described: not a par2 index.")
        raw = bytes(body[_FILEDESC.size : _FILEDESC.size + MAX_NAME_BYTES]).rstrip(b"\0")
        self.descs[file_id] = Par2File(
            file_id=file_id.hex(), name=_name(raw), size=size, md5=md5.hex(), hash16k=hash16k.hex()
        )

    def files(self) -> tuple[Par2File, ...]:
        """The files the main packet names, in its order (every FileDesc when it is missing)."""
        ids = self.main[2] if self.main else list(self.descs)
        files = []
        for file_id in ids:
            described = self.descs.get(file_id)
            if described is None:
                continue
            name = self.unicode_names.get(file_id)
            files.append(described if name is None else _renamed(described, name))
        return tuple(files)


def _main(body: memoryview) -> tuple[int, list[bytes]]:
    """The slice size and the file ids (the recovery set's, then the others) of a Main packet."""
    if len(body) < _MAIN.size:
        raise Par2Error("A par2 Main packet is shorter than its fixed fields.")
    slice_size, _recoverable = _MAIN.unpack_from(body)
    ids: list[bytes] = []
    for start in range(_MAIN.size, len(body) - 15, 16):  # the count is the packet's length
        if len(ids) >= MAX_FILES:
            raise Par2Error(f"A par2 Main packet names more than {MAX_FILES} files.")
        ids.append(bytes(body[start : start + 16]))
    STEPS.take(len(ids))
    return slice_size, ids


def _name(raw: bytes) -> str:
    """A file name as par2 writes it: UTF-8 in practice, Latin-1 from old Windows clients."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _renamed(described: Par2File, name: str) -> Par2File:
    return Par2File(
        file_id=described.file_id,
        name=name,
        size=described.size,
        md5=described.md5,
        hash16k=described.hash16k,
    )
