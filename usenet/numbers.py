"""Whole numbers read from text someone else wrote: ASCII digits 0-9, bounded.

`str.isdigit()` is true for "²", "³" and hundreds more characters, some of
which `int()` refuses (a ValueError nobody expected) and others it reads as
digits ("\u0661\u0662", Arabic-Indic digits, is 12). `int()` also takes " 12", "+12"
and "1_000", and builds a number of any size from a long enough text. None of
that is a number to this project: every place where text from a client, a
news server or a poster becomes an int reads it here (docs/security.md,
"Numbers from clients"), and a test fails on any other isdigit(), isdecimal()
or isnumeric() in the source.

What is a number: surrounding ASCII spaces, tabs, CR and LF are ignored; then
an optional "-" where the bounds allow negative numbers (never "+"), then 1 to
MAX_DIGITS ASCII digits; its value within the caller's bounds. The length is
checked before `int()` runs, so no huge number is ever built. No Django here:
the agent reads through it too.
"""

from __future__ import annotations

from .limits import MAX_BIGINT

__all__ = ["MAX_DIGITS", "NotANumber", "ascii_digits", "decimal_number", "whole_number"]

MAX_DIGITS = 20  # 2**64 has 20 digits; no field here holds more
_EDGES = " \t\r\n"


class NotANumber(ValueError):
    """The text is not a whole number within the bounds.

    `expected` says what would be ("a whole number from 1 to 500"), to follow a
    field's name in the caller's sentence; str() is a whole sentence. `above`:
    the text is a number (of any length) above `high`, as a size past every limit.
    """

    def __init__(
        self, low: float, high: float, *, above: bool = False, kind: str = "a whole number"
    ) -> None:
        self.low, self.high, self.above = low, high, above
        self.expected = f"{kind} from {_shown(low)} to {_shown(high)}"
        super().__init__(f"Expected {self.expected}, in ASCII digits 0-9.")


def _shown(bound: float) -> str:
    """A bound as a sentence shows it: 100, not 100.0."""
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


def ascii_digits(text: str | bytes) -> bool:
    """Whether text is 1 to MAX_DIGITS ASCII digits 0-9 and nothing else (no sign, no
    space): then int(text) is exact and cheap. For hot protocol paths (an overview
    line's article number), where whole_number's call would cost a tenth of the line."""
    # isascii() first: among ASCII characters isdigit() is true for 0-9 alone.
    return len(text) <= MAX_DIGITS and text.isascii() and text.isdigit()


def whole_number(text: str | bytes, *, low: int = 0, high: int = MAX_BIGINT) -> int:
    """The number `text` writes, from low to high; NotANumber (a ValueError) otherwise.

    Bytes are read as Latin-1 (a protocol line): only their ASCII digits count.
    """
    if len(text) <= MAX_DIGITS and text.isascii() and text.isdigit():  # ascii_digits(), inline
        value = int(text)
    else:
        value = _signed_or_spaced(text, low, high)
    if not low <= value <= high:
        raise NotANumber(low, high, above=value > high)
    return value


def _signed_or_spaced(text: str | bytes, low: int, high: int) -> int:
    body = (text.decode("latin-1") if isinstance(text, bytes) else text).strip(_EDGES)
    digits = body[1:] if low < 0 and body.startswith("-") else body
    if not ascii_digits(digits):
        # Digits alone, more of them than fit (a size past every limit), or anything else?
        plain = digits is body and digits != "" and not digits.strip("0123456789")
        raise NotANumber(low, high, above=plain and len(digits.lstrip("0")) > MAX_DIGITS)
    return int(body)


def decimal_number(text: str | bytes, *, low: float, high: float) -> float:
    """The decimal number `text` writes, from low to high; NotANumber otherwise.

    The same rule as whole_number, with at most one "." among the digits and a
    digit on at least one side of it ("5", "5.", ".5", "99.5"): never an
    exponent, "inf", "nan", "+", "_" or digits other than ASCII 0-9 (float()
    reads "\u0661\u0660" and "1_0" as 10, and "1e308" as a number too). At most
    MAX_DIGITS digits, counted before float() runs.
    """
    body = (text.decode("latin-1") if isinstance(text, bytes) else text).strip(_EDGES)
    unsigned = body[1:] if low < 0 and body.startswith("-") else body
    whole, _point, fraction = unsigned.partition(".")
    if not ascii_digits(whole + fraction):
        raise NotANumber(low, high, kind="a decimal number")
    value = float(body)
    if not low <= value <= high:
        raise NotANumber(low, high, above=value > high, kind="a decimal number")
    return value
