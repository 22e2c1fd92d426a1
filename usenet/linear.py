"""Regular expressions that run in linear time, for patterns applied to strangers' text.

Subjects and posters come from anyone who posts to Usenet, and rule sets from
operators; Python's ``re`` backtracks, so one crafted subject or one careless
pattern such as ``(a+)+$`` can take seconds or hours. Every rule pattern is
compiled here, with RE2 (the ``google-re2`` bindings): matching time grows
linearly with the text whatever the pattern. The price is RE2's syntax: no
lookaround, no backreferences, and ``\\w``, ``\\d``, ``\\b`` are ASCII (use
``\\pL``, ``\\pN`` for other scripts). A pattern RE2 cannot run is refused with
``PatternError``, never run by a backtracking engine. Measured against the
alternatives in docs/performance.md ("Subject rules in linear time").
"""

from __future__ import annotations

from typing import Any

import re2

__all__ = ["LinearPattern", "PatternError", "compile_linear"]

# A pattern whose automaton needs more is refused rather than slowing every node.
MAX_PATTERN_MEMORY = 8 << 20

_UNANCHORED = re2._Anchor.UNANCHORED
_ANCHOR_START = re2._Anchor.ANCHOR_START
_NO_MATCH = (-1, -1)


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why, in RE2's words."""


class LinearPattern:
    """A compiled RE2 pattern, called straight on RE2's matcher.

    The ``re2`` module's own ``match``/``search``/``sub`` wrap every call in
    Python-level offset bookkeeping that costs ten times the match on a short
    subject (docs/performance.md); the rules need only group texts and a
    literal replacement, taken here from byte offsets of the UTF-8 text, which
    RE2 always puts on character boundaries.
    """

    __slots__ = ("_regexp", "groupindex", "pattern")

    def __init__(self, pattern: str, *, dotall: bool = False) -> None:
        try:
            compiled = re2.compile(pattern, _options(dotall=dotall))
        except re2.error as error:
            raise PatternError(_reason(pattern, error)) from None
        self.pattern = pattern
        self.groupindex: dict[str, int] = compiled.groupindex
        self._regexp = compiled._regexp

    def numbers(self, names: tuple[str, ...]) -> tuple[int, ...]:
        """The numbers of named groups, to pass to ``match`` and ``search``."""
        return tuple(self.groupindex[name] for name in names)

    def match(self, text: str, groups: tuple[int, ...]) -> list[str] | None:
        """The texts of ``groups`` (numbers) in a match at the start of ``text``; None if none.

        A group that took no part in the match reads as "".
        """
        return self._groups(_ANCHOR_START, text, groups)

    def search(self, text: str, groups: tuple[int, ...]) -> list[str] | None:
        """The texts of ``groups`` in the first match anywhere in ``text``; None if none."""
        return self._groups(_UNANCHORED, text, groups)

    def contains(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text``."""
        data = text.encode("utf-8", "surrogatepass")
        return self._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0] >= 0

    def sub(self, replacement: str, text: str) -> str:
        """``text`` with every match replaced by the literal ``replacement``."""
        data = text.encode("utf-8", "surrogatepass")
        end = len(data)
        spans = self._regexp.Match(_UNANCHORED, data, 0, end)[0]
        if spans == _NO_MATCH:
            return text
        new = replacement.encode("utf-8", "surrogatepass")
        pieces: list[bytes] = []
        copied = pos = 0
        while spans != _NO_MATCH:
            start, stop = spans
            pieces += (data[copied:start], new)
            copied = pos = stop
            if start == stop:  # an empty match: step over one character
                pos = _next_character(data, pos)
            if pos > end:
                break
            spans = self._regexp.Match(_UNANCHORED, data, pos, end)[0]
        pieces.append(data[copied:])
        return b"".join(pieces).decode("utf-8", "surrogatepass")

    def _groups(self, anchor: Any, text: str, groups: tuple[int, ...]) -> list[str] | None:
        data = text.encode("utf-8", "surrogatepass")
        spans = self._regexp.Match(anchor, data, 0, len(data))
        if spans[0][0] < 0:
            return None
        # (-1, -1), a group that took no part, slices to "".
        if len(data) == len(text):  # ASCII: byte offsets are character offsets
            return [text[spans[i][0] : spans[i][1]] for i in groups]
        return [data[spans[i][0] : spans[i][1]].decode("utf-8", "surrogatepass") for i in groups]


def _next_character(data: bytes, pos: int) -> int:
    pos += 1
    while pos < len(data) and data[pos] & 0xC0 == 0x80:  # a UTF-8 continuation byte
        pos += 1
    return pos


def _options(*, dotall: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # the error goes into PatternError, not to stderr
    options.max_mem = MAX_PATTERN_MEMORY
    options.dot_nl = dotall
    return options


def _reason(pattern: str, error: Exception) -> str:
    reason = error.args[0] if error.args else error
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    if "(?<" in pattern or "(?=" in pattern or "(?!" in pattern:
        return f"{reason} (lookahead and lookbehind are not supported: match the context instead)"
    if "\\1" in pattern or "(?P=" in pattern:
        return f"{reason} (backreferences are not supported)"
    return str(reason)


def compile_linear(pattern: str, *, dotall: bool = False) -> LinearPattern:
    """Compile ``pattern`` with RE2; raises PatternError when RE2 cannot run it."""
    return LinearPattern(pattern, dotall=dotall)
