"""yEnc article bodies decoded, with their size and CRC checked against the trailer.

Input: the body of one article as the NNTP client gives it, dot-stuffing
already undone (a line that was ``..x`` on the wire is ``.x`` here) and
without the terminating ``.`` line; lines end in CRLF or LF. Lines before
``=ybegin`` (at most MAX_PREAMBLE bytes of them) and after ``=yend`` are
ignored.

The header lines (``=ybegin``, ``=ypart``, ``=yend``) are always read here, in
Python, field by field with bounded numbers.

Checks: the decoded length equals the trailer's ``size=`` and, for a part,
``end - begin + 1``; the CRC32 equals ``pcrc32=`` (or, for a whole file in one
article, ``crc32=``) when the trailer has one. A failed check is a YencError.

Two ways to the data, the same result (tests/inspection holds them equal), so a
node without sabctools's wheel reports what one with it does, slower:

- At once, with ``sabctools`` (SABnzbd's C decoder, an optional dependency: the
  ``yenc`` extra) when it is importable and the trailer gives a CRC: the data
  lines go to its decoder as they are, with no pass over them in Python
  (sabctools undoes dot-stuffing, drops the line ends, decodes and computes the
  CRC in C, with the GIL released), and its result is taken when its length and
  CRC are the header's.
- Else the exact way, in Python (``decode_pure``), which decides what any other
  body is (no CRC, line ends that are not CRLF, a failed check) or which check it
  fails.

So the body may also be as on the wire, still dot-stuffed (``stuffed``:
NNTPClient.body(stuffed=True) leaves it so to spare a pass over it): sabctools
reads that form, and the exact way unstuffs it first.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from types import ModuleType

from usenet.nntp.client import unstuff
from usenet.numbers import NotANumber, whole_number

from .errors import YencError
from .steps import STEPS

__all__ = [
    "MAX_BODY",
    "YencHeader",
    "YencPart",
    "decode",
    "decode_pure",
    "decoder_name",
]

MAX_BODY = 16 << 20  # an article body; real ones are under 1 MiB
MAX_PREAMBLE = 4096  # text before =ybegin (some posters put a line or two there)
MAX_HEADER_LINE = 2048  # an =ybegin line with a long name is under 600 bytes
MAX_FILE_SIZE = 1 << 48  # a yEnc size= above 256 TiB is no file
MAX_NAME = 1024  # characters of the name= kept

_PLAIN = bytes((byte - 42) & 0xFF for byte in range(256))
_ESCAPED = bytes((byte - 106) & 0xFF for byte in range(256))  # 64 + 42
_ESCAPED_EQUALS = bytes(((ord("=") - 106) & 0xFF,))


@dataclass(frozen=True, slots=True)
class YencHeader:
    """What the =ybegin, =ypart and =yend lines say. begin/end: 1-based, inclusive."""

    name: str
    size: int  # of the whole file
    part: int | None
    total: int | None
    begin: int | None
    end: int | None
    end_size: int | None  # the trailer's size=, of this article's data
    crc: int | None  # the CRC the trailer gives for this article's data, if any


@dataclass(frozen=True, slots=True)
class YencPart:
    """One decoded article: its data and its header fields."""

    data: bytes
    header: YencHeader
    crc_checked: bool  # False when the trailer gave no CRC to check against


@functools.cache
def _accelerator() -> ModuleType | None:
    """sabctools when it is importable (the optional ``yenc`` extra), else None."""
    try:
        import sabctools
    except ImportError:
        return None
    return sabctools


def decoder_name() -> str:
    """Which decoder decode() uses here: "sabctools x.y.z" or "pure-python"."""
    accelerator = _accelerator()
    return f"sabctools {accelerator.__version__}" if accelerator else "pure-python"


def decode(body: bytes, *, stuffed: bool = False) -> YencPart:
    """The data of one yEnc article body, checked; YencError if it cannot be or fails a
    check. `stuffed`: the body is as on the wire, its dot-stuffing not yet undone."""
    if _accelerator() is not None:
        part = _at_once(body)
        if part is not None:
            return part
    return decode_pure(unstuff(body) if stuffed else body)


def decode_pure(body: bytes) -> YencPart:
    """decode() without sabctools, whether or not it is installed (the exact way)."""
    if len(body) > MAX_BODY:
        raise YencError(f"The article body is {len(body)} bytes, more than the {MAX_BODY} read.")
    header, data_start, data_end = _frame(body)
    raw = body[data_start:data_end]
    if raw.startswith(b"=y") or b"\r\n=y" in raw:
        # No encoder starts a data line so ('y' is never escaped), and sabctools reads
        # such a line as a header line: the data would not be what this decodes.
        raise YencError(
            "A data line starts with '=y' before the =yend line: the body is not one article."
        )
    data = _pure_data(raw)
    STEPS.take(len(raw))
    return _checked(data, header)


def _frame(body: bytes) -> tuple[YencHeader, int, int]:
    """The header fields, and where the data lines start and end."""
    if body.startswith(b"=ybegin "):
        start = 0
    else:
        start = body.find(b"\n=ybegin ", 0, MAX_PREAMBLE + 9)
        if start < 0:
            raise YencError("No =ybegin line at the start of the body: it is not yEnc.")
        start += 1
    begin_line, after = _line(body, start)
    begin = _fields(begin_line[len(b"=ybegin ") :], named=True)
    part_fields: dict[str, bytes] = {}
    if body.startswith(b"=ypart ", after):
        part_line, after = _line(body, after)
        part_fields = _fields(part_line[len(b"=ypart ") :], named=False)
    end_at = body.rfind(b"\n=yend ", after - 1)
    if end_at < 0:
        raise YencError("No =yend line: the body is cut short.")
    end_line, _ = _line(body, end_at + 1)
    trailer = _fields(end_line[len(b"=yend ") :], named=False)
    header = _header(begin, part_fields, trailer)
    return header, after, end_at + 1


def _line(body: bytes, start: int) -> tuple[bytes, int]:
    """The header line at start (without its line end, bounded) and where the next one starts."""
    end = body.find(b"\n", start, start + MAX_HEADER_LINE + 1)
    if end < 0:
        if len(body) - start > MAX_HEADER_LINE:
            raise YencError(f"A yEnc header line is longer than {MAX_HEADER_LINE} bytes.")
        end = len(body)
    return body[start:end].rstrip(b"\r"), end + 1


def _fields(text: bytes, *, named: bool) -> dict[str, bytes]:
    """key=value words; with named, name= takes the rest of the line (names have spaces)."""
    fields: dict[str, bytes] = {}
    if named:
        at = text.find(b"name=")
        if at >= 0 and (at == 0 or text[at - 1 : at] == b" "):
            fields["name"] = text[at + 5 :].rstrip(b" \t\0")
            text = text[:at]
    for word in text.split(None, 32)[:32]:
        key, equals, value = word.partition(b"=")
        if equals and key and key.isascii():
            fields.setdefault(key.decode("ascii").lower(), value)
    return fields


def _number(fields: dict[str, bytes], key: str, *, low: int = 0) -> int | None:
    value = fields.get(key)
    if value is None:
        return None
    try:
        return whole_number(value, low=low, high=MAX_FILE_SIZE)
    except NotANumber as error:
        raise YencError(f"The yEnc field {key}= is not {error.expected}.") from None


def _crc(trailer: dict[str, bytes], whole_file: bool) -> int | None:
    value = trailer.get("pcrc32")
    if value is None and whole_file:
        value = trailer.get("crc32")
    if value is None:
        return None
    hex_digits = value.strip()
    if not 1 <= len(hex_digits) <= 8 or hex_digits.strip(b"0123456789abcdefABCDEF"):
        raise YencError("The yEnc CRC is not 1 to 8 hexadecimal digits.")
    return int(hex_digits, 16)


def _header(
    begin: dict[str, bytes], part: dict[str, bytes], trailer: dict[str, bytes]
) -> YencHeader:
    size = _number(begin, "size")
    if size is None:
        raise YencError("The =ybegin line has no size=.")
    raw_name = begin.get("name", b"")  # within a header line: at most MAX_HEADER_LINE bytes
    try:
        name = raw_name.decode("utf-8")
    except UnicodeDecodeError:
        name = raw_name.decode("latin-1")
    part_number = _number(begin, "part", low=1)
    first, last = _number(part, "begin", low=1), _number(part, "end", low=1)
    if part_number is not None and (first is None or last is None):
        raise YencError("A multi-part yEnc article needs an =ypart line with begin= and end=.")
    if first is not None and last is not None and not first <= last <= size:
        raise YencError(f"The =ypart range {first}-{last} is not within the file's {size} bytes.")
    whole_file = first is None or (first == 1 and last == size)
    return YencHeader(
        name=name[:MAX_NAME],
        size=size,
        part=part_number,
        total=_number(begin, "total", low=1),
        begin=first,
        end=last,
        end_size=_number(trailer, "size"),
        crc=_crc(trailer, whole_file),
    )


def _checked(data: bytes, header: YencHeader) -> YencPart:
    expected = header.size
    if header.begin is not None and header.end is not None:
        expected = header.end - header.begin + 1
    if len(data) != expected:
        raise YencError(f"The article decodes to {len(data)} bytes; its header says {expected}.")
    if header.end_size is not None and header.end_size != len(data):
        raise YencError(
            f"The article decodes to {len(data)} bytes; its =yend line says {header.end_size}."
        )
    if header.crc is None:
        return YencPart(data, header, crc_checked=False)
    crc = zlib.crc32(data)
    if crc != header.crc:
        raise YencError(f"The article's CRC32 is {crc:08x}; its =yend line says {header.crc:08x}.")
    return YencPart(data, header, crc_checked=True)


def _pure_data(raw: bytes) -> bytes:
    """The data lines decoded: each '=' escape undone, line ends dropped, then minus 42.

    What sabctools makes of the same lines with CRLF line ends (it drops a CR or an
    LF alone too, but reads an escape before one otherwise: the CRC then tells): an
    '=' at the end of a line escapes the line end (a CR, decoded as 0xA3) and the
    last line is taken to end with one.
    """
    lines = raw.translate(None, b"\r").replace(b"\n", b"\r")  # one CR ends each line
    if not lines.endswith(b"\r"):
        lines += b"\r"
    pieces = lines.split(b"=")
    STEPS.take(len(pieces))
    decoded = [pieces[0].translate(_PLAIN, b"\r")]
    last = len(pieces) - 1
    escaping = True  # each piece after a '=' starts with an escaped byte
    for index in range(1, len(pieces)):
        piece = pieces[index]
        if not escaping:  # the '=' before this piece was itself an escaped byte
            decoded.append(piece.translate(_PLAIN, b"\r"))
            escaping = True
        elif piece:
            decoded.append(piece[:1].translate(_ESCAPED))
            decoded.append(piece[1:].translate(_PLAIN, b"\r"))
        elif index != last:  # "==": the escaped byte is '=' itself
            decoded.append(_ESCAPED_EQUALS)
            escaping = False
    return b"".join(decoded)


def _at_once(body: bytes) -> YencPart | None:
    """The article decoded by sabctools from its data lines as they are, stuffed or not,
    when its length and CRC are the header's; None when that cannot be vouched for
    (the exact way then decides).

    A dot-stuffed line is unstuffed by sabctools; a line that starts with a dot in a
    body already unstuffed, or a line end that is not CRLF, changes what it decodes,
    and the length or the CRC then tells. A data line starting with ``=y`` (the
    exact way refuses the body) is a header line to sabctools: ``=yend`` or any
    other ends its data (the length tells), and ``=ybegin`` or ``=ypart`` restart
    it, which would go unseen, so the frame it is given starts its part at byte 2,
    which such a line changes (only a line written to repeat this frame exactly
    would go unseen: sabctools then skips it).
    """
    if len(body) > MAX_BODY:
        return None
    try:
        header, data_start, data_end = _frame(body)
    except YencError:
        return None  # the exact way says why (stuffing may have moved =ybegin)
    if header.crc is None or not body.endswith(b"\r\n", data_start, data_end):
        return None
    expected = header.size
    if header.begin is not None and header.end is not None:
        expected = header.end - header.begin + 1
    if header.end_size not in (None, expected) or expected == 0:
        return None
    size = data_end - data_start
    head = _FRAME_HEAD % (size + 1, size + 1)
    tail = b"=yend size=%d pcrc32=%08x\r\n.\r\n" % (size, header.crc)
    total = len(head) + size + len(tail)
    accelerator = _accelerator()
    assert accelerator is not None
    decoder = accelerator.Decoder(total)
    with memoryview(decoder) as view:
        if len(view) < total:  # past sabctools's largest buffer (10 MiB)
            return None
        view[: len(head)] = head
        with memoryview(body) as data:
            view[len(head) : len(head) + size] = data[data_start:data_end]
        view[len(head) + size : total] = tail
    decoder.process(total)
    answer = next(iter(decoder), None)
    if (
        answer is None
        or answer.bytes_read != total
        or answer.bytes_decoded != expected
        or (answer.file_size, answer.part_begin, answer.part_end) != (size + 1, 1, size + 1)
        or answer.crc is None  # sabctools gives it only when it is the pcrc32 above
        or answer.data is None
    ):
        return None
    STEPS.take(size)
    return YencPart(bytes(answer.data), header, crc_checked=True)


# What _at_once frames the data lines with: a part from byte 2 (sabctools counts from 0:
# its part_begin is then 1), which no =ybegin or =ypart line among them repeats by chance.
_FRAME_HEAD = (
    b"222 0 <inspect@yenc>\r\n=ybegin part=1 line=128 size=%d name=x\r\n=ypart begin=2 end=%d\r\n"
)
