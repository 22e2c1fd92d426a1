"""Whether a release or file name is obfuscated: random letters and digits, no word.

Most binaries are posted under names such as ``a8f7d6e5c4b3``,
``b1c2d3.part01.rar`` or a UUID; their real names are only inside the files
(issue 26). A name is obfuscated when, once its archive and volume suffixes
and one file extension are cut off, none of its tokens (split at ``. _ -``,
spaces and brackets) is a word. A word is a token of at least three letters
that is not hash-like. A token is hash-like when it is long and mixes
letters and digits back and forth (``b1c2d3``: at least three changes
between a letter and a digit), when it is 16 or more hexadecimal characters,
or when it is 24 or more letters and digits with no separator at all (no
title runs that long as one token).

No regular expression: one pass over the characters. Names are cut at
MAX_NAME characters first, so the cost is bounded whatever is posted.
"""

from __future__ import annotations

__all__ = ["is_obfuscated", "is_word"]

MAX_NAME = 1024
MIN_WORD_LETTERS = 3
MIXED_TOKEN = 6  # at least this long to be hash-like by its letter/digit changes
MIXED_CHANGES = 3
HEX_TOKEN = 16
LONG_TOKEN = 24

_SEPARATORS = frozenset("._- ()[]{}+,")
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
# Suffixes cut from the end before the tokens are read: archive parts and
# volumes, then one extension of the files releases carry.
_VOLUME_WORDS = frozenset(("rar", "par2", "par", "7z", "zip", "nfo", "sfv", "srr", "nzb"))
_EXTENSIONS = frozenset(
    "mkv mp4 avi m4v wmv mov mpg mpeg ts m2ts webm iso img bin mp3 flac m4a m4b aac ogg "
    "epub pdf mobi azw3 cbr cbz exe jpg png txt srt sub idx".split()
)
_LONGEST_SUFFIX = len("vol99999+99999")


def _all_in(text: str, allowed: frozenset[str]) -> bool:
    return bool(text) and all(char in allowed for char in text)


def _is_suffix(token: str) -> bool:
    word = token.lower()
    if word in _VOLUME_WORDS or word in _EXTENSIONS:
        return True
    if word.startswith("part"):
        return _all_in(word[4:], _DIGITS)
    if word.startswith("vol"):
        first, _, second = word[3:].replace("-", "+").partition("+")
        return _all_in(first, _DIGITS) and _all_in(second, _DIGITS)
    if word.startswith("r") and 2 <= len(word) - 1 <= 3:
        return _all_in(word[1:], _DIGITS)
    return len(word) == 3 and _all_in(word, _DIGITS)


def stem_of(name: str) -> str:
    """The name without its archive/volume suffixes and one file extension."""
    end = len(name)
    while (dot := name.rfind(".", 0, end)) >= 0 and 0 < end - dot - 1 <= _LONGEST_SUFFIX:
        if not _is_suffix(name[dot + 1 : end]):
            break
        end = dot
    return name[:end]


def _is_hash_like(token: str) -> bool:
    if len(token) >= HEX_TOKEN and _all_in(token, _HEX):
        return True
    if not token.isalnum():
        return False
    if len(token) >= LONG_TOKEN:
        return True
    if len(token) < MIXED_TOKEN:
        return False
    changes = 0
    previous_digit: bool | None = None
    for char in token:
        digit = char in _DIGITS
        if previous_digit is not None and digit != previous_digit:
            changes += 1
        previous_digit = digit
    return changes >= MIXED_CHANGES


def is_word(token: str) -> bool:
    """A token that names something: three letters or more, and not hash-like."""
    letters = sum(1 for char in token if char.isalpha())
    return letters >= MIN_WORD_LETTERS and not _is_hash_like(token)


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    start = 0
    for index, char in enumerate(text):
        if char in _SEPARATORS:
            if index > start:
                tokens.append(text[start:index])
            start = index + 1
    if len(text) > start:
        tokens.append(text[start:])
    return tokens


def is_obfuscated(name: str) -> bool:
    """Whether ``name`` (a release or a file name) has no word: see the module's text."""
    stem = stem_of(name.strip()[:MAX_NAME])
    return not any(is_word(token) for token in _tokens(stem))
