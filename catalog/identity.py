"""How the coordinator names what nodes report: file keys and release keys.

A node's grouping is not trusted: every reported file's key is derived here
again from (group, poster, subject, total) under the current rule set. A
subject the rules cannot parse (no segment counter) is keyed by the whole
subject as sent: nothing in it can be cut away safely, and every segment of
such a post carries the same subject, so the key is still stable.
"""

from __future__ import annotations

from dataclasses import dataclass

from usenet.numbers import ascii_digits
from usenet.rules import RuleSet, file_key, keyed_digest

RELEASE_KEY_PERSON = b"usenet-release1"

# Suffixes that vary between the files of one release: "name.part01.rar",
# "name.r00", "name.7z.001", "name.vol03+04.par2", "name.par2", "name.nfo".
# Read from the end, one dot-separated token at a time, without a regex: the
# pattern this replaces, a repeated group anchored at the end, backtracked
# quadratically under ``re`` on "x.rar.rar....rar.mkv" (7 ms at 960 characters).
_SUFFIX_WORDS = frozenset(
    ("rar", "par2", "par", "7z", "zip", "nfo", "sfv", "srr", "nzb", "jpg", "png", "txt")
)
_LONGEST_SUFFIX = len("vol99999+99999")
# Case-insensitive as the pattern was under ``re``: casefold() agrees with its
# (?i) on the letters of these suffixes but for the Turkish dotted and dotless i.
_TURKISH_I = str.maketrans({"\u0130": "i", "\u0131": "i"})


def _digits(text: str, fewest: int, most: int) -> bool:
    return fewest <= len(text) <= most and ascii_digits(text)  # 0-9 only, as every number here


def _is_release_suffix(token: str) -> bool:
    """Whether ``token`` (the text after a dot) is one of the suffixes above."""
    word = token.lower() if token.isascii() else token.translate(_TURKISH_I).casefold()
    if word in _SUFFIX_WORDS:
        return True
    if word.startswith("part"):
        return _digits(word[4:], 1, 4)
    if word.startswith("vol"):
        first, _, second = word[3:].replace("-", "+").partition("+")
        return _digits(first, 1, 5) and _digits(second, 1, 5)
    if word.startswith("r"):
        return _digits(word[1:], 2, 3)
    return _digits(word, 3, 3)


@dataclass(frozen=True, slots=True)
class Identity:
    key: bytes
    total: int
    name: str
    file_index: int | None
    file_count: int | None


def release_stem(name: str) -> str:
    """The part of a file name its sibling files share ("name.part01.rar" -> "name").

    Linear in the name: ``rfind`` passes each character once, and only tokens
    of at most 14 characters are read further.
    """
    end = len(name)
    while (dot := name.rfind(".", 0, end)) >= 0 and 0 < end - dot - 1 <= _LONGEST_SUFFIX:
        if not _is_release_suffix(name[dot + 1 : end]):
            break
        end = dot
    return name[:end] or name


def release_key(group: str, poster: str, name: str, file_count: int | None) -> bytes | None:
    """The key the files of one post share; None when the subject has no file counter."""
    if file_count is None or file_count < 2:
        return None
    return keyed_digest(RELEASE_KEY_PERSON, (group, poster, release_stem(name)), file_count)


def identify_report(rules: RuleSet, group: str, poster: str, subject: str, total: int) -> Identity:
    """The catalog identity of a reported file under `rules`.

    The subject's own segment counter decides the total when it has one (it is
    what `RuleSet.identify` hashes); otherwise the reported total is used.
    """
    parsed = rules.parse_subject(subject)
    if parsed is not None:
        return Identity(
            file_key(group, poster, parsed.key_subject, parsed.total),
            parsed.total,
            parsed.name,
            parsed.file_index,
            parsed.file_count,
        )
    shape = rules.shape(subject, "")
    return Identity(
        file_key(group, poster, subject, total),
        total,
        shape.name,
        shape.file_index,
        shape.file_count,
    )
