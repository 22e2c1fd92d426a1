"""par2 packets give the files' real names, sizes and MD5s, past garbage and within bounds."""

from __future__ import annotations

import hashlib
import struct

import pytest

from inspection import par2
from inspection.errors import Par2Error

from .conftest import UNICODE_NAME, Par2Fixture, md5, random_bytes, steps_of


def packet(kind: bytes, body: bytes, set_id: bytes = b"S" * 16) -> bytes:
    """A par2 packet with a correct MD5, its body padded to a multiple of 4 as par2 pads."""
    rest = set_id + kind + body + b"\0" * (-len(body) % 4)
    return b"PAR2\0PKT" + struct.pack("<Q", 32 + len(rest)) + hashlib.md5(rest).digest() + rest


def packets(data: bytes) -> list[bytes]:
    """The packets of a par2 file, split at their magic."""
    pieces = data.split(b"PAR2\0PKT")
    assert pieces[0] == b""
    return [b"PAR2\0PKT" + piece for piece in pieces[1:]]


def expected_files(fixture: Par2Fixture) -> dict[str, tuple[int, str, str]]:
    return {
        name: (len(content), md5(content), md5(content[:16384]))
        for name, content in fixture.files.items()
    }


def found_files(found: par2.Par2Set) -> dict[str, tuple[int, str, str]]:
    return {file.name: (file.size, file.md5, file.hash16k) for file in found.files}


def test_the_index_file_names_every_file_with_its_size_and_hashes(par2_set: Par2Fixture) -> None:
    found = par2.parse(par2_set.index)
    assert found.main_found and found.damaged == 0
    assert found_files(found) == expected_files(par2_set)
    assert UNICODE_NAME in found_files(found)
    assert found.slice_size and found.slice_size % 4 == 0


def test_a_recovery_volume_names_the_same_files(par2_set: Par2Fixture) -> None:
    found = par2.parse(par2_set.volume)
    assert found_files(found) == expected_files(par2_set)
    assert found.set_id == par2.parse(par2_set.index).set_id


def test_garbage_between_packets_is_skipped(par2_set: Par2Fixture) -> None:
    noisy = b"junk before".join(packets(par2_set.index)) + b"\0" * 7
    # A magic with a wrong MD5 in the garbage, and one whose length runs past the end:
    noisy = b"PAR2\0PKT" + struct.pack("<Q", 64) + b"\0" * 48 + noisy + b"PAR2\0PKT\xff\xff"
    found = par2.parse(noisy)
    assert found_files(found) == expected_files(par2_set)
    assert found.damaged == 2


def test_without_a_main_packet_the_described_files_are_returned(par2_set: Par2Fixture) -> None:
    kept = [p for p in packets(par2_set.index) if par2.TYPE_MAIN not in p[48:64]]
    found = par2.parse(b"".join(kept))
    assert not found.main_found
    assert found_files(found) == expected_files(par2_set)


def test_a_unicode_name_packet_gives_the_name() -> None:
    file_id = b"F" * 16
    desc = packet(
        par2.TYPE_FILEDESC,
        file_id + b"M" * 16 + b"H" * 16 + struct.pack("<Q", 5) + b"ascii?.mkv\0\0",
    )
    main = packet(par2.TYPE_MAIN, struct.pack("<QI", 1024, 1) + file_id)
    name = packet(par2.TYPE_UNICODE_NAME, file_id + "日本語.mkv".encode("utf-16-le"))
    assert [f.name for f in par2.parse(main + desc + name).files] == ["日本語.mkv"]


def test_a_name_that_is_not_utf8_is_read_as_latin1() -> None:
    desc = packet(par2.TYPE_FILEDESC, b"F" * 48 + struct.pack("<Q", 5) + b"caf\xe9.mkv\0\0\0")
    assert [f.name for f in par2.parse(desc).files] == ["café.mkv"]


def test_bytes_without_a_good_packet_are_a_par2_error(par2_set: Par2Fixture) -> None:
    with pytest.raises(Par2Error, match="No par2 packet"):
        par2.parse(random_bytes(5000, 20))
    broken = bytearray(par2_set.index)
    for start in range(100, len(broken), 50):  # damage every packet's body
        broken[start] ^= 0xFF
    with pytest.raises(Par2Error, match="No par2 packet"):
        par2.parse(bytes(broken))


def test_a_par2_of_100k_tiny_packets_is_read_in_linear_work(par2_set: Par2Fixture) -> None:
    tiny = packet(b"PAR 2.0\0Creator\0", b"")
    data = tiny * 100_000 + par2_set.index
    steps = steps_of(par2.parse, data)
    found = par2.parse(data)
    assert found.packets == 100_000 + len(packets(par2_set.index))
    assert found_files(found) == expected_files(par2_set)
    assert steps <= 2 * len(data)


def test_more_packets_than_the_bound_is_a_par2_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(par2, "MAX_PACKETS", 1000)
    with pytest.raises(Par2Error, match="More than 1000 par2 packets"):
        par2.parse(packet(b"PAR 2.0\0Creator\0", b"") * 1001)


def test_a_main_packet_naming_too_many_files_is_a_par2_error() -> None:
    ids = b"".join(struct.pack("<16s", b"%d" % n) for n in range(par2.MAX_FILES + 1))
    with pytest.raises(Par2Error, match="names more than"):
        par2.parse(packet(par2.TYPE_MAIN, struct.pack("<QI", 1024, 0xFFFFFFFF) + ids))


def test_headers_that_each_claim_the_rest_cost_linear_work() -> None:
    """Fake packets nested in each other: a failed MD5 is paid once each, up to a budget."""
    for count in (1000, 4000):
        fake = b"".join(
            b"PAR2\0PKT" + struct.pack("<Q", (count - n) * 64) + b"\0" * 48 for n in range(count)
        )
        steps = steps_of(par2.parse, fake)
        with pytest.raises(Par2Error):
            par2.parse(fake)
        assert steps <= (par2.FAILED_MD5_BUDGET + 2) * len(fake) + par2.FAILED_MD5_SLACK


def test_every_truncation_of_a_real_index_parses_or_is_a_par2_error(small_par2: bytes) -> None:
    complete = par2.parse(small_par2)
    for end in range(len(small_par2) + 1):
        try:
            found = par2.parse(small_par2[:end])
        except Par2Error:
            continue
        # a cut file yields no file the whole one does not
        assert set(found.files) <= set(complete.files)
