"""nfo text read for a release name, IMDb ids and TVDB ids.

An nfo is a scene release's text file, usually cp437 (box-drawing art), now
and then UTF-8. It is decoded as UTF-8 when it starts with a BOM or is valid
UTF-8 (ASCII is both), as UTF-16 after a UTF-16 BOM, else as cp437, which
every byte string is. Only the first MAX_NFO bytes are read. Every search is
a forward scan by str.find with bounded look-ahead: no regular expression, so
nothing backtracks, and each character is looked at a bounded number of times.

- IMDb: ``tt`` and 7 or 8 ASCII digits, not inside a longer word or number
  (``imdb.com/title/tt0111161/``, or bare).
- TVDB: after ``thetvdb.com`` (in any case, also percent-encoded behind a
  dereferrer): ``/series/ID``, ``?id=ID``, ``&id=ID``, ``seriesid=ID`` within
  the next MAX_LINK characters. ``/series/some-slug`` carries no id.
- A release name: a token of at least three dot-separated words (letters,
  digits, ``-_()``) ending in ``-GROUP``, as scene names are.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from urllib.parse import unquote

from .errors import NfoError
from .steps import STEPS

__all__ = ["MAX_NFO", "NfoFacts", "decode_text", "parse", "scene_like"]

MAX_NFO = 64 << 10
MAX_IDS = 16  # ids of each kind kept
MAX_LINK = 160  # characters after "thetvdb.com" searched for the id
MAX_NAMES = 8
MIN_NAME, MAX_NAME = 10, 200
DIGITS = frozenset("0123456789")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_NAME_CHARACTERS = _WORD | frozenset("._-()")
_TRIM = "\"'`<>[]{}()|,;:!?*"


@dataclass(frozen=True, slots=True)
class NfoFacts:
    """What the nfo says. ids as their text ("tt0111161", "81189"), first seen first."""

    encoding: str
    imdb_ids: tuple[str, ...]
    tvdb_ids: tuple[str, ...]
    release_names: tuple[str, ...]
    truncated: bool


def parse(data: bytes) -> NfoFacts:
    """The ids and release names in an nfo's bytes (the first MAX_NFO of them)."""
    if not isinstance(data, bytes | bytearray):
        raise NfoError("An nfo is bytes.")
    truncated = len(data) > MAX_NFO
    text, encoding = decode_text(bytes(data[:MAX_NFO]))
    STEPS.take(len(text))
    return NfoFacts(
        encoding=encoding,
        imdb_ids=_imdb_ids(text),
        tvdb_ids=_tvdb_ids(text),
        release_names=_release_names(text),
        truncated=truncated,
    )


def decode_text(data: bytes) -> tuple[str, str]:
    """The text and the name of the charset it was read in."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", "replace"), "utf-8"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace"), "utf-16"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as error:
        if error.start >= len(data) - 3 and error.reason == "unexpected end of data":
            # cut in the middle of a character by MAX_NFO
            return data.decode("utf-8", "replace"), "utf-8"
    return data.decode("cp437"), "cp437"


def _digits_at(text: str, start: int, most: int) -> int:
    """How many ASCII digits (up to most + 1) run from start."""
    end = start
    limit = min(len(text), start + most + 1)
    while end < limit and text[end] in DIGITS:
        end += 1
    return end - start


def _imdb_ids(text: str) -> tuple[str, ...]:
    found: list[str] = []
    lowered = text.lower()
    position = lowered.find("tt")
    while position >= 0 and len(found) < MAX_IDS:
        STEPS.take()
        if lowered[position + 2 : position + 3] not in DIGITS:  # "http", "title", "settings"
            position = lowered.find("tt", position + 1)
            continue
        count = _digits_at(lowered, position + 2, 8)
        before = lowered[position - 1] if position else " "
        if 7 <= count <= 8 and before not in _WORD:
            identifier = "tt" + lowered[position + 2 : position + 2 + count]
            if identifier not in found:
                found.append(identifier)
        position = lowered.find("tt", position + 2 + count if count else position + 1)
    return tuple(found)


_TVDB_KEYS = ("/series/", "?id=", "&id=", "seriesid=", "&amp;id=")


def _tvdb_ids(text: str) -> tuple[str, ...]:
    found: list[str] = []
    lowered = text.lower()
    for host in ("thetvdb.com", "thetvdb%2ecom"):
        position = lowered.find(host)
        while position >= 0 and len(found) < MAX_IDS:
            STEPS.take(MAX_LINK)
            start = position + len(host)
            window = unquote(lowered[start : start + MAX_LINK])
            window = window.split(None, 1)[0] if window.strip() else ""
            identifier = _tvdb_id(window)
            if identifier and identifier not in found:
                found.append(identifier)
            position = lowered.find(host, start)
    return tuple(found)


def _tvdb_id(link: str) -> str | None:
    """The id in what follows "thetvdb.com" in a link, if it carries one."""
    for key in _TVDB_KEYS:
        at = link.find(key)
        if at >= 0:
            count = _digits_at(link, at + len(key), 10)
            if 1 <= count <= 10:
                return link[at + len(key) : at + len(key) + count].lstrip("0") or None
    return None


def _release_names(text: str) -> tuple[str, ...]:
    """Scene-like tokens, first seen first. Only a token with two dots can be one, and
    an nfo repeats its name: those are picked out and made unique in C first."""
    tokens = text.split()
    STEPS.take(len(tokens))
    names: list[str] = []
    for token in dict.fromkeys(token for token in tokens if token.count(".") >= 2):
        if len(names) >= MAX_NAMES:
            break
        name = token.strip(_TRIM)
        if scene_like(name) and name not in names:
            names.append(name)
    return tuple(names)


def scene_like(name: str) -> bool:
    """Words.Joined.By.Dots-GROUP: at least three words, a group of 2 to 15 characters."""
    if not MIN_NAME <= len(name) <= MAX_NAME or name.count(".") < 2:
        return False
    if not set(name) <= _NAME_CHARACTERS or "://" in name or name.startswith("www."):
        return False
    stem, dash, group = name.rpartition("-")
    if not dash or not 2 <= len(group) <= 15 or not set(group) <= _WORD:
        return False
    words = stem.split(".")
    return len(words) >= 3 and all(words)
