"""Newsgroup names as RFC 3977 allows them: checked before one reaches a command.

A group name goes into ``GROUP`` on a logged-in session; a CR or LF in it
would end that command and start another. RFC 3977 (section 9.8,
``newsgroup-name`` = 1*``wildmat-exact``) allows printable US-ASCII except
``!``, ``*``, ``,``, ``?``, ``[``, ``\\``, ``]`` and any UTF-8 character
beyond ASCII; no space, no control character. The coordinator stores at most
MAX_GROUP_NAME characters (RFC 3977 asks servers for at most 497 octets).
"""

from __future__ import annotations

MAX_GROUP_NAME = 255
_WILDMAT_SPECIALS = frozenset("!*,?[\\]")

__all__ = ["MAX_GROUP_NAME", "group_name_problem"]


def group_name_problem(name: object) -> str | None:
    """Why ``name`` is not a newsgroup name, in a sentence; None when it is one."""
    if not isinstance(name, str) or not name:
        return "A group name must be a non-empty string."
    if len(name) > MAX_GROUP_NAME:
        return f"A group name has at most {MAX_GROUP_NAME} characters, not {len(name)}."
    for character in name:
        code = ord(character)
        if code < 0x21 or code == 0x7F or 0x80 <= code < 0xA0:
            return (
                f"The group name {name!r} holds a space or a control character"
                f" (U+{code:04X}); RFC 3977 allows neither."
            )
        if character in _WILDMAT_SPECIALS:
            return (
                f"The group name {name!r} holds {character!r}; RFC 3977 keeps"
                " ! * , ? [ \\ ] out of group names."
            )
        if 0xD800 <= code < 0xE000:
            return f"The group name {name!r} is not valid UTF-8."
    return None
