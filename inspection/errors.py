"""The errors the inspection parsers raise: one class per format, all an InspectError.

A parser given hostile bytes raises its own error and nothing else (a fuzz
test holds every parser to that): the agent reports the sentence and moves on.
"""

from __future__ import annotations

__all__ = [
    "ArchiveError",
    "InspectError",
    "NfoError",
    "Par2Error",
    "RarError",
    "SevenZipError",
    "YencError",
    "ZipError",
]


class InspectError(ValueError):
    """Bytes that cannot be read as the format they were said to be; str() says why."""


class YencError(InspectError):
    """A yEnc body that cannot be decoded, or whose size or CRC does not match its trailer."""


class Par2Error(InspectError):
    """par2 bytes with no readable packet, or more packets or files than the bounds."""


class NfoError(InspectError):
    """An nfo past its size bound."""


class ArchiveError(InspectError):
    """The start of an archive whose headers cannot be read."""


class RarError(ArchiveError):
    """A RAR 4 or RAR 5 header that is cut short, bad, or past the bounds."""


class SevenZipError(ArchiveError):
    """A 7z signature header that is cut short or bad."""


class ZipError(ArchiveError):
    """A zip local file header that is cut short or past the bounds."""
