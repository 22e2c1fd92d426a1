"""yEnc bodies decode, with size and CRC checked, the same with sabctools and without."""

from __future__ import annotations

import sys
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspection import yenc
from inspection.errors import YencError

from .conftest import random_bytes, yenc_body

DECODERS = [yenc.decode, yenc.decode_pure]


def test_sabctools_is_what_decode_uses_when_it_is_installed() -> None:
    assert yenc.decoder_name().startswith("sabctools 9.")


def test_without_sabctools_decode_runs_the_pure_path(monkeypatch: pytest.MonkeyPatch) -> None:
    data = random_bytes(5000, 10)
    body = yenc_body(data)  # encoded by sabctools, before it is taken away
    wire = body.replace(b"\r\n", b"\r\n.")[:-1]  # every line dot-stuffed, as it may be
    yenc._accelerator.cache_clear()
    monkeypatch.setitem(sys.modules, "sabctools", None)  # import sabctools now fails
    try:
        assert yenc.decoder_name() == "pure-python"
        assert yenc.decode(body).data == data
        assert yenc.decode(b"." + wire, stuffed=True).data == data
    finally:
        yenc._accelerator.cache_clear()


@pytest.mark.parametrize("decode", DECODERS)
def test_a_whole_file_article_decodes_and_checks_its_crc32(decode) -> None:  # type: ignore[no-untyped-def]
    data = random_bytes(40_000, 11) + bytes(range(256)) * 4  # every byte, escapes included
    part = decode(yenc_body(data, "Ünï code name.mkv"))
    assert part.data == data
    assert part.crc_checked
    header = part.header
    assert (header.name, header.size, header.part, header.begin) == (
        "Ünï code name.mkv",
        len(data),
        None,
        None,
    )


@pytest.mark.parametrize("decode", DECODERS)
def test_a_part_decodes_with_its_begin_end_and_pcrc32(decode) -> None:  # type: ignore[no-untyped-def]
    data = random_bytes(10_000, 12)
    part = decode(yenc_body(data, "b1c2d3.part01.rar", part=(3, 20_001, 100_000)))
    assert part.data == data
    assert (part.header.part, part.header.begin, part.header.end) == (3, 20_001, 30_000)
    assert part.header.size == 100_000
    assert part.crc_checked


@pytest.mark.parametrize("decode", DECODERS)
def test_lf_line_ends_and_text_before_ybegin_are_read(decode) -> None:  # type: ignore[no-untyped-def]
    data = random_bytes(3000, 13)
    body = b"posted by someone\n\n" + yenc_body(data, line_end=b"\n")
    assert decode(body).data == data


@pytest.mark.parametrize("decode", DECODERS)
def test_a_name_that_is_not_utf8_is_read_as_latin1(decode) -> None:  # type: ignore[no-untyped-def]
    body = yenc_body(b"abc", "x").replace(b"name=x", b"name=caf\xe9.nfo")
    assert decode(body).header.name == "café.nfo"


@pytest.mark.parametrize("decode", DECODERS)
@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda body: body[: body.rfind(b"crc32=")] + b"crc32=00000001\r\n", "CRC32 is"),
        (lambda body: body.replace(b"=yend size=3000", b"=yend size=2999"), "=yend line says 2999"),
        (
            lambda body: body.replace(b"=ybegin line=128 size=3000", b"=ybegin line=128 size=3001"),
            "header says 3001",
        ),
        (lambda body: body[: body.rfind(b"=yend")], "No =yend"),
        (lambda body: body.replace(b"=ybegin", b"=yboing"), "not yEnc"),
        (lambda body: body.replace(b"size=3000 name", b"size=3e3 name"), "size="),
        (lambda body: body.replace(b"size=3000 name", b"size=99999999999999999999 name"), "size="),
        (lambda body: body.replace(b"crc32=", b"crc32=zz"), "hexadecimal"),
        (lambda body: body.replace(b"\r\n", b"\r\n=ybegin x\r\n", 2), "'=y'"),
    ],
)
def test_a_body_that_fails_a_check_is_a_yenc_error(decode, change, complaint: str) -> None:  # type: ignore[no-untyped-def]
    body = change(yenc_body(random_bytes(3000, 14)))
    with pytest.raises(YencError, match=complaint.replace("(", r"\(")):
        decode(body)


@pytest.mark.parametrize("decode", DECODERS)
def test_a_ypart_outside_the_file_is_refused(decode) -> None:  # type: ignore[no-untyped-def]
    body = yenc_body(b"abcd", part=(2, 99, 50))
    with pytest.raises(YencError, match="not within the file"):
        decode(body)


def test_a_body_past_the_bound_is_refused_before_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yenc, "MAX_BODY", 100)
    with pytest.raises(YencError, match="more than the 100"):
        yenc.decode(yenc_body(random_bytes(200, 15)))


def outcome(decode, body: bytes) -> tuple[str, object]:  # type: ignore[no-untyped-def]
    try:
        part = decode(body)
    except YencError as error:
        return "error", str(error)
    return "ok", (part.data, part.header, part.crc_checked)


# The data lines' alphabet: the bytes yEnc treats apart, and two plain ones.
LINE_BYTES = st.binary(max_size=40).map(
    lambda raw: bytes(b"=\r\n.y a\x00"[byte % 8] for byte in raw)
)


@settings(max_examples=400, deadline=None)
@given(lines=LINE_BYTES, crc=st.booleans())
def test_both_decoders_agree_on_any_data_lines(lines: bytes, crc: bool) -> None:
    """Escapes at line ends, '==', leading dots, bare CR/LF: the same bytes or the same error."""
    decoded = yenc._pure_data(lines)
    trailer = b"=yend size=%d" % len(decoded) + (
        b" crc32=%08x" % zlib.crc32(decoded) if crc else b""
    )
    body = (
        b"=ybegin line=128 size=%d name=n\r\n" % len(decoded) + lines + b"\r\n" + trailer + b"\r\n"
    )
    assert outcome(yenc.decode_pure, body) == outcome(yenc.decode, body)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=3000), line_end=st.sampled_from([b"\r\n", b"\n"]))
def test_both_decoders_agree_on_encoded_data(data: bytes, line_end: bytes) -> None:
    body = yenc_body(data, line_end=line_end)
    assert (
        outcome(yenc.decode_pure, body)
        == outcome(yenc.decode, body)
        == (
            "ok",
            (data, yenc.decode_pure(body).header, True),
        )
    )


def stuffed(body: bytes) -> bytes:
    """The body as on the wire: a dot before each line that starts with one (RFC 3977)."""
    return (b"." if body.startswith(b".") else b"") + body.replace(b"\r\n.", b"\r\n..")


@settings(max_examples=400, deadline=None)
@given(lines=LINE_BYTES, crc=st.booleans())
def test_a_body_as_on_the_wire_decodes_as_the_unstuffed_one(lines: bytes, crc: bool) -> None:
    """sabctools at once on the stuffed lines, or the exact way: what the pure path makes
    of the article, or its error."""
    decoded = yenc._pure_data(lines)
    trailer = b"=yend size=%d" % len(decoded) + (
        b" crc32=%08x" % zlib.crc32(decoded) if crc else b""
    )
    body = (
        b"=ybegin line=128 size=%d name=n\r\n" % len(decoded) + lines + b"\r\n" + trailer + b"\r\n"
    )
    expected = outcome(yenc.decode_pure, body)
    assert outcome(lambda wire: yenc.decode(wire, stuffed=True), stuffed(body)) == expected
    assert outcome(yenc.decode, body) == expected


def test_sabctools_decodes_an_article_with_a_crc_at_once_stuffed_or_not() -> None:
    data = random_bytes(50_000, 16)
    encoded = yenc_body(data)
    lines = encoded[encoded.index(b"\r\n") + 2 : encoded.rindex(b"=yend")]
    data += b"\x04\x37\x38\x04"  # two lines that start with a dot, as some encoders leave them
    lines += b".ab\r\n.\r\n"
    body = b"=ybegin line=128 size=%d name=n\r\n" % len(data) + lines
    body += b"=yend size=%d crc32=%08x\r\n" % (len(data), zlib.crc32(data))
    wire = stuffed(body)
    assert b"\r\n..ab\r\n..\r\n" in wire
    for part in (yenc._at_once(body), yenc._at_once(wire)):
        assert part is None or part.data == data
    assert yenc._at_once(wire) is not None  # sabctools unstuffs the wire form itself
    assert yenc.decode(wire, stuffed=True) == yenc.decode_pure(body)
    assert yenc.decode(body) == yenc.decode_pure(body)  # its dots read as stuffing: the exact way
    no_crc = body[: body.rfind(b" crc32=")] + b"\r\n"
    assert yenc._at_once(no_crc) is None  # nothing to vouch for it: the exact way decides
    assert yenc.decode(no_crc).data == data


@pytest.mark.parametrize(
    "line", [b"=ybegin x", b"=ypart begin=1 end=10", b"=yend size=10", b"=yfoo"]
)
def test_a_yenc_line_inside_the_data_is_refused_with_sabctools_too(line: bytes) -> None:
    body = yenc_body(random_bytes(3000, 17), part=(1, 1, 3000))
    at = body.index(b"\r\n", body.index(b"=ypart")) + 2  # the first data line
    body = body[:at] + line + b"\r\n" + body[at:]
    assert yenc._at_once(body) is None
    with pytest.raises(YencError, match="'=y'"):
        yenc.decode(stuffed(body), stuffed=True)
