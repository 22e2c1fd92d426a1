"""The first volume's headers of RAR 4, RAR 5, 7z and zip archives, from its first bytes.

What the first article of a first volume (some hundreds of KiB) shows:

- RAR 4: the main header (volume, solid, and whether the headers are
  encrypted: then no name can be read) and each file header that starts in
  the bytes there are (name, RAR's Unicode names included; packed and
  unpacked size; password, solid and split flags). A file's data follows its
  header, so the next header is found only when the data ends in these bytes.
- RAR 5: the same from its vint-coded headers; an encryption header means
  every header after it is encrypted (names hidden); a file's encryption
  record means it needs a password.
- 7z: the signature header only. The headers listing the files sit at the
  end of the archive (of the last volume), so from the start one learns that
  it is 7z, its version and the size of the whole archive (the next-header
  offset plus size). Only when the end is in the bytes there are (a small
  single-volume archive) is the next header read, as far as whether it is
  encoded (compressed) and whether its coder is AES: headers encrypted.
- zip: each local file header (name, sizes, the encryption bit, WinZip AES by
  method 99 or the 0x9901 extra field), skipping each file's data by its
  compressed size; a header whose sizes follow the data (bit 3) ends the walk.

Every length is checked against what remains before it is read, every count
is capped, and the walks go forward only.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

from .errors import ArchiveError, RarError, SevenZipError, ZipError
from .steps import STEPS

__all__ = ["ArchiveEntry", "ArchiveFacts", "detect", "parse"]

MAX_ENTRIES = 4096  # file headers read from one volume's first bytes
MAX_NAME_BYTES = 4096
MAX_INPUT = 64 << 20
RAR4_MARKER = b"Rar!\x1a\x07\x00"
RAR5_MARKER = b"Rar!\x1a\x07\x01\x00"
SEVEN_ZIP_MARKER = b"7z\xbc\xaf\x27\x1c"
ZIP_LOCAL = b"PK\x03\x04"
ZIP_SPANNED = b"PK\x07\x08"  # the first bytes of a split zip's first volume
AES_CODER = b"\x06\xf1\x07\x01"  # 7z's id of its AES-256 + SHA-256 coder


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """A file header. size: unpacked, None when the header does not say (zip bit 3)."""

    name: str
    size: int | None
    packed_size: int | None
    encrypted: bool  # its data needs a password
    directory: bool = False
    split_before: bool = False
    split_after: bool = False


@dataclass(slots=True)
class ArchiveFacts:
    """What an archive's first bytes show. None: these bytes cannot tell."""

    format: str  # "rar4", "rar5", "7z", "zip"
    entries: list[ArchiveEntry] = field(default_factory=list)
    volume: bool | None = None  # part of a multi-volume set
    first_volume: bool | None = None
    solid: bool | None = None
    headers_encrypted: bool | None = None  # names hidden without the password
    passworded: bool | None = None  # some file needs a password (or the headers do)
    archive_size: int | None = None  # 7z: the whole archive's size, from its start header
    complete: bool = False  # every header up to the archive's end was read
    notes: list[str] = field(default_factory=list)


def detect(data: bytes) -> str | None:
    """The archive format data starts with, or None."""
    if data.startswith(RAR5_MARKER):
        return "rar5"
    if data.startswith(RAR4_MARKER):
        return "rar4"
    if data.startswith(SEVEN_ZIP_MARKER):
        return "7z"
    if data.startswith((ZIP_LOCAL, ZIP_SPANNED)):
        return "zip"
    return None


def parse(data: bytes) -> ArchiveFacts:
    """What the headers in an archive's first bytes show; an ArchiveError if none can be read."""
    if len(data) > MAX_INPUT:
        raise ArchiveError(
            f"The archive data is {len(data)} bytes, more than the {MAX_INPUT} read."
        )
    kind = detect(data)
    if kind == "rar5":
        facts = _rar5(data)
    elif kind == "rar4":
        facts = _rar4(data)
    elif kind == "7z":
        facts = _seven_zip(data)
    elif kind == "zip":
        facts = _zip(data)
    else:
        raise ArchiveError("The data starts with no RAR, 7z or zip signature.")
    if facts.passworded is None and facts.entries:
        facts.passworded = any(entry.encrypted for entry in facts.entries)
    return facts


def _text(raw: bytes, fallback: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode(fallback)


# --- RAR 4 -------------------------------------------------------------------

_RAR4_BLOCK = struct.Struct("<HBHH")
_RAR4_FILE = struct.Struct(
    "<IIBIIBBHI"
)  # pack, unpack, os, crc, time, version, method, name size, attributes
RAR4_MAIN, RAR4_FILE, RAR4_END = 0x73, 0x74, 0x7B


def _rar4(data: bytes) -> ArchiveFacts:
    facts = ArchiveFacts(format="rar4")
    position = len(RAR4_MARKER)
    while len(facts.entries) < MAX_ENTRIES:
        STEPS.take()
        if len(data) - position < _RAR4_BLOCK.size:
            facts.notes.append("the first volume's bytes end before the next header")
            return facts
        crc, kind, flags, size = _RAR4_BLOCK.unpack_from(data, position)
        if size < _RAR4_BLOCK.size:  # would not move the walk forward
            raise RarError(f"A RAR header at byte {position} is shorter than its own fields.")
        if size > len(data) - position:
            facts.notes.append("the first volume's bytes end inside a header")
            return facts
        header = data[position : position + size]
        if zlib.crc32(header[2:]) & 0xFFFF != crc:
            raise RarError(f"A RAR header at byte {position} fails its CRC.")
        following = 0
        if kind == RAR4_MAIN:
            facts.volume = bool(flags & 0x0001)
            facts.solid = bool(flags & 0x0008)
            facts.first_volume = bool(flags & 0x0100) if facts.volume else True
            facts.headers_encrypted = bool(flags & 0x0080)
            if facts.headers_encrypted:
                facts.passworded = True
                facts.notes.append("the headers are encrypted: file names are hidden")
                return facts
        elif kind == RAR4_FILE:
            entry, following = _rar4_file(header, flags)
            facts.entries.append(entry)
            if entry.encrypted:
                facts.passworded = True
        elif kind == RAR4_END:
            facts.complete = True
            return facts
        elif flags & 0x8000:  # LONG_BLOCK: ADD_SIZE bytes of data follow the header
            if size < 11:
                raise RarError(f"A RAR block at byte {position} is too short for its data size.")
            following = struct.unpack_from("<I", header, 7)[0]
        position += size + following
    raise RarError(f"More than {MAX_ENTRIES} RAR file headers.")


def _rar4_file(header: bytes, flags: int) -> tuple[ArchiveEntry, int]:
    """A FILE_HEAD's entry and the size of the data after it."""
    offset = _RAR4_BLOCK.size
    if len(header) < offset + _RAR4_FILE.size:
        raise RarError("A RAR file header is shorter than its fixed fields.")
    packed, unpacked, _os, _crc, _time, _version, _method, name_size, _attributes = (
        _RAR4_FILE.unpack_from(header, offset)
    )
    offset += _RAR4_FILE.size
    if flags & 0x0100:  # LHD_LARGE: high 32 bits of both sizes
        if len(header) < offset + 8:
            raise RarError("A large RAR file header is shorter than its size fields.")
        high_packed, high_unpacked = struct.unpack_from("<II", header, offset)
        packed |= high_packed << 32
        unpacked |= high_unpacked << 32
        offset += 8
    if name_size > len(header) - offset or name_size > MAX_NAME_BYTES:
        raise RarError("A RAR file name runs past its header.")
    raw = header[offset : offset + name_size]
    if flags & 0x0200:  # LHD_UNICODE
        name = _rar4_unicode_name(raw)
    else:
        name = _text(raw, "cp437")
    entry = ArchiveEntry(
        name=name,
        size=unpacked,
        packed_size=packed,
        encrypted=bool(flags & 0x0004),
        directory=flags & 0x00E0 == 0x00E0,
        split_before=bool(flags & 0x0001),
        split_after=bool(flags & 0x0002),
    )
    return entry, packed


def _rar4_unicode_name(raw: bytes) -> str:
    """RAR 2.9-4's Unicode name: ASCII, a NUL, then UTF-16 coded against the ASCII form.

    The coding (unrar's EncodeFileName) is a run of 2-bit opcodes: a byte, a
    byte in the high byte's page, a full 16-bit unit, or a run copied from the
    ASCII name (optionally shifted). Runs are bounded by the ASCII name's
    length, so the output is at most that long plus one unit per input byte.
    """
    ascii_name, nul, coded = raw.partition(b"\0")
    if not nul:
        return _text(raw, "cp437")
    if not coded:
        return _text(ascii_name, "cp437")
    high = coded[0] << 8
    units: list[int] = []
    position, flags, flag_bits = 1, 0, 0
    limit = len(ascii_name) + len(coded)
    while position < len(coded) and len(units) < limit:
        STEPS.take()
        if flag_bits == 0:
            flags, position, flag_bits = coded[position], position + 1, 8
            if position >= len(coded):
                break
        flag_bits -= 2
        operation = (flags >> flag_bits) & 3
        if operation == 0:
            units.append(coded[position])
            position += 1
        elif operation == 1:
            units.append(coded[position] | high)
            position += 1
        elif operation == 2:
            if position + 1 >= len(coded):
                break
            units.append(coded[position] | coded[position + 1] << 8)
            position += 2
        else:
            length = coded[position]
            position += 1
            if length & 0x80:
                if position >= len(coded):
                    break
                correction = coded[position]
                position += 1
                for _ in range((length & 0x7F) + 2):
                    if len(units) >= len(ascii_name):
                        break
                    units.append(((ascii_name[len(units)] + correction) & 0xFF) | high)
            else:
                for _ in range(length + 2):
                    if len(units) >= len(ascii_name):
                        break
                    units.append(ascii_name[len(units)])
    encoded = struct.pack(f"<{len(units)}H", *units)
    return encoded.decode("utf-16-le", "replace").split("\0", 1)[0]


# --- RAR 5 -------------------------------------------------------------------

RAR5_MAIN, RAR5_FILE, RAR5_SERVICE, RAR5_ENCRYPTION, RAR5_END = 1, 2, 3, 4, 5
MAX_RAR5_HEADER = 2 << 20  # the format's own bound on a header's size


class _Cursor:
    """Reads little-endian fields and vints from bytes, checking each against the end."""

    __slots__ = ("data", "end", "position")

    def __init__(self, data: bytes, position: int, end: int) -> None:
        self.data, self.position, self.end = data, position, end

    def vint(self) -> int:
        value = shift = 0
        for _ in range(10):  # 10 bytes hold 64 bits
            if self.position >= self.end:
                raise RarError("A RAR5 header ends inside a number.")
            byte = self.data[self.position]
            self.position += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
        raise RarError("A RAR5 number is longer than 10 bytes.")

    def fixed(self, size: int) -> bytes:
        if size > self.end - self.position:
            raise RarError("A RAR5 field runs past its header.")
        piece = self.data[self.position : self.position + size]
        self.position += size
        return piece


def _rar5(data: bytes) -> ArchiveFacts:
    facts = ArchiveFacts(format="rar5")
    position = len(RAR5_MARKER)
    while len(facts.entries) < MAX_ENTRIES:
        STEPS.take()
        if len(data) - position < 7:
            facts.notes.append("the first volume's bytes end before the next header")
            return facts
        try:
            sized = _Cursor(data, position + 4, min(len(data), position + 4 + 3))
            header_size = sized.vint()
        except RarError:
            facts.notes.append("the first volume's bytes end inside a header")
            return facts
        start = sized.position
        if header_size < 2:  # a type and flags at least
            raise RarError(f"A RAR5 header at byte {position} is shorter than its own fields.")
        if header_size > MAX_RAR5_HEADER or header_size > len(data) - start:
            facts.notes.append("the first volume's bytes end inside a header")
            return facts
        end = start + header_size
        expected = struct.unpack_from("<I", data, position)[0]
        if zlib.crc32(data[position + 4 : end]) != expected:
            raise RarError(f"A RAR5 header at byte {position} fails its CRC.")
        cursor = _Cursor(data, start, end)
        kind, flags = cursor.vint(), cursor.vint()
        extra_size = cursor.vint() if flags & 0x0001 else 0
        data_size = cursor.vint() if flags & 0x0002 else 0
        if extra_size > end - cursor.position:
            raise RarError("A RAR5 extra area runs past its header.")
        if kind == RAR5_MAIN:
            archive_flags = cursor.vint()
            facts.volume = bool(archive_flags & 0x0001)
            facts.solid = bool(archive_flags & 0x0004)
            volume_number = cursor.vint() if archive_flags & 0x0002 else 0
            facts.first_volume = volume_number == 0
            facts.headers_encrypted = False
        elif kind == RAR5_ENCRYPTION:
            facts.headers_encrypted = True
            facts.passworded = True
            facts.notes.append("the headers are encrypted: file names are hidden")
            return facts
        elif kind == RAR5_FILE:
            entry = _rar5_file(cursor, flags, end - extra_size, end)
            facts.entries.append(entry)
        elif kind == RAR5_END:
            facts.complete = True
            return facts
        position = end + data_size
    raise RarError(f"More than {MAX_ENTRIES} RAR5 file headers.")


def _rar5_file(cursor: _Cursor, flags: int, extra_start: int, end: int) -> ArchiveEntry:
    file_flags = cursor.vint()
    unpacked = cursor.vint()
    cursor.vint()  # attributes
    if file_flags & 0x0002:
        cursor.fixed(4)  # mtime
    if file_flags & 0x0004:
        cursor.fixed(4)  # CRC32
    cursor.vint()  # compression (its solid bit repeats the main header's)
    cursor.vint()  # host OS
    name_size = cursor.vint()
    if name_size > MAX_NAME_BYTES:
        raise RarError("A RAR5 file name is longer than the bound.")
    if cursor.position + name_size > extra_start:
        raise RarError("A RAR5 file name runs into its extra area.")
    name = _text(cursor.fixed(name_size), "latin-1")
    return ArchiveEntry(
        name=name,
        size=None if file_flags & 0x0008 else unpacked,
        packed_size=None,
        encrypted=_rar5_encrypted(cursor.data, extra_start, end),
        directory=bool(file_flags & 0x0001),
        split_before=bool(flags & 0x0008),
        split_after=bool(flags & 0x0010),
    )


def _rar5_encrypted(data: bytes, start: int, end: int) -> bool:
    """Whether a file header's extra area holds an encryption record (type 1)."""
    cursor = _Cursor(data, start, end)
    while cursor.position < end:
        STEPS.take()
        size = cursor.vint()
        if size == 0 or size > end - cursor.position:
            raise RarError("A RAR5 extra record runs past its header.")
        after = cursor.position + size
        if cursor.vint() == 0x01:
            return True
        cursor.position = after
    return False


# --- 7z ------------------------------------------------------------------------

_SEVEN_ZIP_START = struct.Struct("<6sBBIQQI")
SEVEN_ZIP_HEADER, SEVEN_ZIP_ENCODED_HEADER = 0x01, 0x17


def _seven_zip(data: bytes) -> ArchiveFacts:
    facts = ArchiveFacts(format="7z")
    if len(data) < _SEVEN_ZIP_START.size:
        raise SevenZipError("The 7z signature header is cut short.")
    _marker, major, _minor, start_crc, offset, size, next_crc = _SEVEN_ZIP_START.unpack_from(data)
    if zlib.crc32(data[12:32]) != start_crc:
        raise SevenZipError("The 7z signature header fails its CRC.")
    if major != 0:
        raise SevenZipError(f"7z format version {major} is not one this reads.")
    facts.archive_size = _SEVEN_ZIP_START.size + offset + size
    facts.volume = None  # a 7z volume is a plain cut of the archive: nothing inside says so
    start = _SEVEN_ZIP_START.size + offset
    if size == 0:
        facts.complete = True
        facts.notes.append("an empty archive")
        return facts
    if size > len(data) - start or start > len(data):
        facts.notes.append(
            f"the file list is in the archive's last {size} bytes (byte {start} on), not in these"
        )
        return facts
    header = data[start : start + size]
    STEPS.take(size)
    if zlib.crc32(header) != next_crc:
        raise SevenZipError("The 7z next header fails its CRC.")
    facts.complete = True
    if header[0] == SEVEN_ZIP_ENCODED_HEADER:
        # The file list is packed (and, with -mhe, encrypted) by the coders named here.
        facts.headers_encrypted = AES_CODER in header
        if facts.headers_encrypted:
            facts.passworded = True
            facts.notes.append("the headers are encrypted: file names are hidden")
        else:
            facts.notes.append("the file list is compressed; names are not read")
    elif header[0] == SEVEN_ZIP_HEADER:
        facts.headers_encrypted = False
        facts.passworded = AES_CODER in header  # a folder coded by AES: its files need one
        facts.notes.append("the file list is plain; names are not read")
    else:
        raise SevenZipError(f"The 7z next header starts with an unknown id {header[0]}.")
    return facts


# --- zip -------------------------------------------------------------------------

_ZIP_LOCAL = struct.Struct("<4sHHHHHIIIHH")
ZIP_AES_EXTRA, ZIP64_EXTRA = 0x9901, 0x0001


def _zip(data: bytes) -> ArchiveFacts:
    facts = ArchiveFacts(format="zip")
    position = 0
    if data.startswith(ZIP_SPANNED):
        facts.volume = True
        position = 4
    while len(facts.entries) < MAX_ENTRIES:
        STEPS.take()
        if not data.startswith(ZIP_LOCAL, position):
            if data.startswith(b"PK\x01\x02", position) or data.startswith(b"PK\x05\x06", position):
                facts.complete = True  # the central directory: no more local headers
            elif len(data) - position < 4:
                facts.notes.append("the first volume's bytes end before the next header")
            else:
                facts.notes.append(f"no local header at byte {position}")
            return facts
        if len(data) - position < _ZIP_LOCAL.size:
            facts.notes.append("the first volume's bytes end inside a header")
            return facts
        fields = _ZIP_LOCAL.unpack_from(data, position)
        flags, method, packed, unpacked, name_size, extra_size = (
            fields[2], fields[3], fields[7], fields[8], fields[9], fields[10]
        )  # fmt: skip
        start = position + _ZIP_LOCAL.size
        if name_size + extra_size > len(data) - start:
            facts.notes.append("the first volume's bytes end inside a header")
            return facts
        raw_name = data[start : start + min(name_size, MAX_NAME_BYTES)]
        extra = data[start + name_size : start + name_size + extra_size]
        aes, sizes = _zip_extra(extra)
        if sizes is not None and (packed == 0xFFFFFFFF or unpacked == 0xFFFFFFFF):
            unpacked, packed = sizes
        descriptor = bool(flags & 0x0008)
        facts.entries.append(
            ArchiveEntry(
                # bit 11: UTF-8 by the spec; else cp437, though many tools write UTF-8 anyway
                name=_text(raw_name, "cp437"),
                size=None if descriptor else unpacked,
                packed_size=None if descriptor else packed,
                encrypted=bool(flags & 0x0001) or aes or method == 99,
                directory=raw_name.endswith(b"/"),
            )
        )
        if descriptor:
            facts.notes.append("a file's sizes follow its data: the walk stops there")
            return facts
        position = start + name_size + extra_size + packed
    raise ZipError(f"More than {MAX_ENTRIES} zip local headers.")


def _zip_extra(extra: bytes) -> tuple[bool, tuple[int, int] | None]:
    """(whether an AES record is there, the zip64 sizes if given) from a local extra field."""
    aes, sizes = False, None
    position = 0
    while len(extra) - position >= 4:
        STEPS.take()
        kind, size = struct.unpack_from("<HH", extra, position)
        position += 4
        if size > len(extra) - position:
            raise ZipError("A zip extra field runs past its header.")
        if kind == ZIP_AES_EXTRA:
            aes = True
        elif kind == ZIP64_EXTRA and size >= 16:
            sizes = struct.unpack_from("<QQ", extra, position)
        position += size
    return aes, sizes
