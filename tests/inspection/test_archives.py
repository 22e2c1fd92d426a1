"""First-volume headers of RAR 4, RAR 5, 7z and zip: names, sizes and flags, from real archives."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from inspection import archives
from inspection.errors import ArchiveError, RarError, SevenZipError, ZipError

from .conftest import UNICODE_NAME, rar

# Mathematical bold capitals (U+1D400...): outside the BMP, a surrogate pair in UTF-16.
BOLD_ABBC = "\U0001d400\U0001d401\U0001d401\U0001d402.txt"


def names(facts: archives.ArchiveFacts) -> list[str]:
    return [entry.name for entry in facts.entries]


@pytest.mark.parametrize(
    ("file", "fmt", "expected", "solid", "passworded"),
    [
        ("rar3-solid.rar", "rar4", ["stest1.txt", "stest2.txt"], True, False),
        ("rar3-comment-psw.rar", "rar4", ["file1.txt", "file2.txt"], False, True),
        ("unicode.rar", "rar4", ["уииоотивл.txt", BOLD_ABBC], True, False),
        ("unicode2.rar", "rar4", [BOLD_ABBC, "уииоотивл.txt"], False, False),
        ("rar5-solid.rar", "rar5", ["stest1.txt", "stest2.txt"], True, False),
        ("rar5-psw.rar", "rar5", ["stest1.txt", "stest2.txt"], False, True),
        ("rar5-blake.rar", "rar5", ["stest1.txt", "stest2.txt"], False, False),
    ],
)
def test_rar_file_headers_give_names_and_flags(
    file: str, fmt: str, expected: list[str], solid: bool, passworded: bool
) -> None:
    facts = archives.parse(rar(file))
    assert (facts.format, names(facts), facts.solid, facts.passworded) == (
        fmt, expected, solid, passworded,
    )  # fmt: skip
    assert facts.headers_encrypted is False
    assert facts.complete
    assert all(entry.encrypted == passworded for entry in facts.entries)


def test_rar_sizes_are_the_unpacked_sizes() -> None:
    assert [e.size for e in archives.parse(rar("rar3-solid.rar")).entries] == [2048, 2048]
    assert [e.size for e in archives.parse(rar("rar5-psw.rar")).entries] == [2048, 2048]


@pytest.mark.parametrize(
    ("file", "fmt"), [("rar3-comment-hpsw.rar", "rar4"), ("rar5-hpsw.rar", "rar5")]
)
def test_encrypted_rar_headers_hide_the_names(file: str, fmt: str) -> None:
    facts = archives.parse(rar(file))
    assert (facts.format, facts.headers_encrypted, facts.passworded, facts.entries) == (
        fmt, True, True, [],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("file", "name"),
    [
        ("rar3-vols.part1.first8k.rar", "vols\\bigfile.txt"),
        ("rar5-vols.part1.first8k.rar", "vols/bigfile.txt"),
    ],
)
def test_a_first_volumes_first_article_shows_the_volume_and_a_split_file(
    file: str, name: str
) -> None:
    facts = archives.parse(rar(file))
    assert facts.volume and facts.first_volume
    [entry] = facts.entries
    assert (entry.name, entry.size, entry.split_after, entry.split_before) == (
        name,
        205000,
        True,
        False,
    )
    assert not facts.complete


def test_a_rar4_header_with_a_bad_crc_is_a_rar_error() -> None:
    data = bytearray(rar("rar3-solid.rar"))
    data[7 + 13 + 30] ^= 0xFF  # inside the first file header's name
    with pytest.raises(RarError, match="CRC"):
        archives.parse(bytes(data))


def test_seven_zip_from_its_start_tells_its_size_and_no_names(
    seven_zip_archives: dict[str, bytes],
) -> None:
    first = seven_zip_archives["volumes.7z"]
    facts = archives.parse(first)
    assert facts.format == "7z"
    assert facts.headers_encrypted is None and facts.passworded is None
    assert facts.archive_size and facts.archive_size > len(first)
    assert not facts.complete


@pytest.mark.parametrize(
    ("name", "headers_encrypted", "passworded"),
    [
        ("plain.7z", False, None),
        ("password.7z", False, None),
        ("headers.7z", True, True),
        ("tiny-headers.7z", True, True),
    ],
)
def test_a_whole_small_7z_shows_whether_its_headers_are_encrypted(
    seven_zip_archives: dict[str, bytes],
    name: str,
    headers_encrypted: bool,
    passworded: bool | None,
) -> None:
    data = seven_zip_archives[name]
    facts = archives.parse(data)
    assert (facts.headers_encrypted, facts.passworded, facts.complete) == (
        headers_encrypted, passworded, True,
    )  # fmt: skip
    assert facts.archive_size == len(data)


def test_a_7z_signature_header_with_a_bad_crc_is_an_error(
    seven_zip_archives: dict[str, bytes],
) -> None:
    data = bytearray(seven_zip_archives["plain.7z"])
    data[20] ^= 1
    with pytest.raises(SevenZipError, match="CRC"):
        archives.parse(bytes(data))


@pytest.mark.parametrize(
    ("name", "encrypted"), [("plain.zip", False), ("zipcrypto.zip", True), ("aes.zip", True)]
)
def test_zip_local_headers_give_names_sizes_and_encryption(
    seven_zip_archives: dict[str, bytes], name: str, encrypted: bool
) -> None:
    facts = archives.parse(seven_zip_archives[name])
    assert sorted(names(facts)) == sorted([UNICODE_NAME, "b.nfo"])
    assert {e.name: e.size for e in facts.entries}[UNICODE_NAME] == 20_000
    assert facts.passworded is encrypted
    assert all(e.encrypted is encrypted for e in facts.entries)
    assert facts.complete


def test_a_zip_written_as_a_stream_stops_at_its_first_data_descriptor() -> None:
    class Stream(io.RawIOBase):
        def __init__(self) -> None:
            self.written = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, data) -> int:  # type: ignore[no-untyped-def, override]
            self.written += data
            return len(data)

    stream = Stream()
    with zipfile.ZipFile(stream, "w") as archive:  # not seekable: sizes after the data
        archive.writestr("ä first.txt", b"x" * 100)
        archive.writestr("second.txt", b"y")
    facts = archives.parse(bytes(stream.written))
    [entry] = facts.entries
    assert (entry.name, entry.size) == ("ä first.txt", None)
    assert "follow its data" in facts.notes[0]


def test_a_spanned_zip_marker_says_volume() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("inside.mkv", b"z" * 10)
    facts = archives.parse(b"PK\x07\x08" + buffer.getvalue())
    assert facts.volume and names(facts) == ["inside.mkv"]


def test_a_zip_extra_field_past_its_header_is_a_zip_error() -> None:
    header = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, 1, 8)
    with pytest.raises(ZipError, match="extra field"):
        archives.parse(header + b"a" + struct.pack("<HH", 0x9901, 200) + b"\0" * 4)


def test_bytes_with_no_signature_are_an_archive_error() -> None:
    with pytest.raises(ArchiveError, match="no RAR, 7z or zip signature"):
        archives.parse(b"\x00" * 100)


def test_the_rar4_unicode_name_coding_is_bounded_on_any_bytes() -> None:
    for coded in (b"\xff" * 300, b"\x00" + b"\xff\x7f" * 200, b"\x01" + b"\xc0\xff\xff" * 100):
        name = archives._rar4_unicode_name(b"abc\0" + coded)
        assert len(name) <= 3 + len(coded)
