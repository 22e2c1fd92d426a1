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

__all__ = ["Pattern", "PatternError", "compile_linear"]

# A compiled RE2 pattern: match/search/sub/groupindex as in ``re``.
Pattern = Any

# A pattern whose automaton needs more is refused rather than slowing every node.
MAX_PATTERN_MEMORY = 8 << 20


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why, in RE2's words."""


def _options(*, dotall: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # the error goes into PatternError, not to stderr
    options.max_mem = MAX_PATTERN_MEMORY
    options.dot_nl = dotall
    return options


def compile_linear(pattern: str, *, dotall: bool = False) -> Pattern:
    """Compile ``pattern`` with RE2; raises PatternError when RE2 cannot run it."""
    try:
        return re2.compile(pattern, _options(dotall=dotall))
    except re2.error as error:
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        hint = ""
        if "(?<" in pattern or "(?=" in pattern or "(?!" in pattern:
            hint = " (lookahead and lookbehind are not supported: match the context instead)"
        elif "\\1" in pattern or "(?P=" in pattern:
            hint = " (backreferences are not supported)"
        raise PatternError(f"{reason}{hint}") from None
