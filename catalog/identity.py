"""How the coordinator names what nodes report: file keys and release keys.

A node's grouping is not trusted: every reported file's key is derived here
again from (group, poster, subject, total) under the current rule set. A
subject the rules cannot parse (no segment counter) is keyed by the whole
subject as sent: nothing in it can be cut away safely, and every segment of
such a post carries the same subject, so the key is still stable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from usenet.rules import RuleSet, file_key, keyed_digest

RELEASE_KEY_PERSON = b"usenet-release1"

# Suffixes that vary between the files of one release: "name.part01.rar",
# "name.r00", "name.7z.001", "name.vol03+04.par2", "name.par2", "name.nfo".
_RELEASE_SUFFIX = re.compile(
    r"(?i)(?:\.(?:part\d{1,4}|vol\d{1,5}[+-]\d{1,5}|r\d{2,3}|\d{3}|rar|par2|par|7z|zip"
    r"|nfo|sfv|srr|nzb|jpg|png|txt))+$"
)


@dataclass(frozen=True, slots=True)
class Identity:
    key: bytes
    total: int
    name: str
    file_index: int | None
    file_count: int | None


def release_stem(name: str) -> str:
    """The part of a file name its sibling files share ("name.part01.rar" -> "name")."""
    return _RELEASE_SUFFIX.sub("", name) or name


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
