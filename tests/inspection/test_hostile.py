"""Hostile bytes: every parser raises only its own error, never hangs, and works linearly.

Real files are cut at every offset, and hypothesis feeds random bytes and
real files mutated (bytes flipped, inserted, deleted, lengths set huge). The
work is bounded through the parsers' STEPS count against the input's size,
never by a clock.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspection import archives, inspect_article, nfo, par2, yenc
from inspection.errors import (
    ArchiveError,
    InspectError,
    NfoError,
    Par2Error,
    RarError,
    YencError,
)

from .conftest import Par2Fixture, lines_run, rar, steps_of, yenc_body

PARSERS: dict[str, tuple[Callable[[bytes], object], type[InspectError], int]] = {
    # name: (parse, its error, the steps it may take per input byte)
    "par2": (par2.parse, Par2Error, par2.FAILED_MD5_BUDGET + 2),
    "nfo": (nfo.parse, NfoError, 20),
    "archive": (archives.parse, ArchiveError, 2),
    "yenc": (yenc.decode, YencError, 3),
    "yenc-pure": (yenc.decode_pure, YencError, 3),
}
SLACK = par2.FAILED_MD5_SLACK + 4096  # what a tiny input may cost
LINES_SLACK = 2000  # lines of Python a parse runs whatever its input's size


def only_its_error(name: str, data: bytes) -> None:
    parse, error, per_byte = PARSERS[name]
    try:
        parse(data)
    except error:
        pass
    assert steps_of(parse, data) <= per_byte * len(data) + SLACK


RARS = [
    "rar3-solid.rar", "rar3-comment-psw.rar", "rar3-comment-hpsw.rar", "unicode.rar",
    "unicode2.rar", "rar5-solid.rar", "rar5-psw.rar", "rar5-hpsw.rar", "rar5-blake.rar",
]  # fmt: skip


@pytest.fixture(scope="module")
def samples(
    small_par2: bytes, par2_set: Par2Fixture, seven_zip_archives: dict[str, bytes]
) -> dict[str, list[bytes]]:
    """Real inputs of each parser, small enough to cut at every offset."""
    nfo_text = "╔═╗ Some.Movie.2001.1080p.BluRay.x264-GRP tt0111161 thetvdb.com/?id=81189 ╚═╝"
    return {
        "par2": [small_par2, par2_set.index[:3000]],
        "nfo": [nfo_text.encode("cp437"), nfo_text.encode("utf-8")],
        "archive": [rar(name) for name in RARS]
        + [seven_zip_archives["tiny-headers.7z"], seven_zip_archives["aes.zip"][:600]],
        "yenc": [yenc_body(bytes(range(256)) * 2, "n.bin", part=(1, 1, 512))],
    }


@pytest.mark.parametrize("name", ["par2", "nfo", "archive", "yenc"])
def test_a_real_file_cut_at_every_offset_raises_only_its_own_error(
    samples: dict[str, list[bytes]], name: str
) -> None:
    for data in samples[name]:
        for end in range(len(data) + 1):
            only_its_error(name, data[:end])
            if name == "yenc":
                only_its_error("yenc-pure", data[:end])


def test_lengths_past_the_end_and_huge_counts_are_errors_not_allocations() -> None:
    rar5_huge = archives.RAR5_MARKER + b"\0\0\0\0" + b"\xff\xff\xff\x7f" + b"\x02" * 20
    zip_huge = struct.pack(
        "<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 2**32 - 1, 2**32 - 1, 65535, 65535
    )
    par2_huge = b"PAR2\0PKT" + struct.pack("<Q", 2**64 - 4) + b"\0" * 100
    seven_huge = b"7z\xbc\xaf\x27\x1c\0\4" + b"\0" * 4 + struct.pack("<QQI", 2**63, 2**63, 0)
    for name, data in [
        ("archive", rar5_huge),
        ("archive", zip_huge),
        ("par2", par2_huge),
        ("archive", seven_huge),
    ]:
        only_its_error(name, data)


@pytest.mark.parametrize(
    "data",
    [
        archives.RAR4_MARKER + struct.pack("<HBHH", 0, 0x7A, 0, 0) * 1000,
        archives.RAR5_MARKER + (b"\0\0\0\0\0") * 1000,
    ],
)
def test_a_header_that_would_not_move_the_walk_is_an_error(data: bytes) -> None:
    """A header whose size is 0 would be read again and again: it is refused."""
    with pytest.raises(RarError, match="shorter than its own fields"):
        archives.parse(data)


def mutated(real: bytes) -> st.SearchStrategy[bytes]:
    """real with a few bytes flipped, runs inserted or deleted, or a 32-bit field set huge."""

    def apply(edits: list[tuple[int, int, int]]) -> bytes:
        data = bytearray(real)
        for kind, where, value in edits:
            at = where % (len(data) + 1)
            if kind == 0 and at < len(data):
                data[at] ^= value or 1
            elif kind == 1:
                data[at:at] = bytes([value]) * (value % 17 + 1)
            elif kind == 2:
                del data[at : at + value % 9 + 1]
            else:
                data[at : at + 4] = b"\xff\xff\xff\x7f"
        return bytes(data)

    edit = st.tuples(st.integers(0, 3), st.integers(0, 2**20), st.integers(0, 255))
    return st.lists(edit, min_size=1, max_size=6).map(apply)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(data=st.data())
def test_mutated_real_files_raise_only_their_own_errors(
    samples: dict[str, list[bytes]], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(["par2", "nfo", "archive", "yenc"]))
    real = data.draw(st.sampled_from(samples[name]))
    only_its_error(name, data.draw(mutated(real)))
    if name == "yenc":
        only_its_error("yenc-pure", data.draw(mutated(real)))


PREFIXES = [
    b"",
    b"PAR2\0PKT",
    archives.RAR4_MARKER,
    archives.RAR5_MARKER,
    archives.SEVEN_ZIP_MARKER,
    b"PK\x03\x04",
    b"=ybegin size=9 name=x\r\n",
]


@FUZZ
@given(
    name=st.sampled_from(sorted(PARSERS)),
    prefix=st.sampled_from(PREFIXES),
    tail=st.binary(max_size=2000),
)
def test_random_bytes_raise_only_their_own_errors(name: str, prefix: bytes, tail: bytes) -> None:
    only_its_error(name, prefix + tail)


@FUZZ
@given(data=st.data())
def test_inspect_article_never_raises(samples: dict[str, list[bytes]], data: st.DataObject) -> None:
    role = data.draw(st.sampled_from(["par2", "nfo", "archive"]))
    inner = data.draw(mutated(data.draw(st.sampled_from(samples[role]))))
    body = yenc_body(inner) if data.draw(st.booleans()) else inner
    result = inspect_article(role, body)
    assert result.role == role
    assert len(result.files) <= 1000


@pytest.mark.parametrize("name", ["par2", "nfo", "archive", "yenc-pure"])
def test_work_grows_linearly_with_hostile_input(name: str) -> None:
    """The same hostile pattern at 64 KiB and 1 MiB: 16x the bytes, at most ~16x the steps."""
    unit = {
        "par2": b"PAR2\0PKT" + struct.pack("<Q", 32 << 10) + b"\0" * 48,  # each fails its MD5
        "nfo": b"tt1 thetvdb.com/series/ a.b.c-D ",
        "archive": b"Rar!\x1a\x07\x00",
        "yenc-pure": b"==\r\n=",
    }[name]

    def hostile(size: int) -> bytes:
        body = unit * (size // len(unit))
        if name == "yenc-pure":
            return b"=ybegin size=1 name=x\r\n" + body + b"\r\n=yend size=1\r\n"
        if name == "archive":
            return archives.RAR4_MARKER + struct.pack("<HBHH", 0, 0x7A, 0x8000, 11) + body
        return body

    parse, _error, per_byte = PARSERS[name]
    small, large = steps_of(parse, hostile(64 << 10)), steps_of(parse, hostile(1 << 20))
    assert large <= 17 * max(small, 1) + SLACK
    assert large <= per_byte * len(hostile(1 << 20)) + SLACK
    # The lines of Python run, which the parser does not count itself.
    small, large = lines_run(parse, hostile(64 << 10)), lines_run(parse, hostile(1 << 20))
    assert large <= 17 * max(small, 1) + LINES_SLACK, (small, large)
