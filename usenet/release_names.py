"""Release names read the way Sonarr and Radarr read them: title, year, season, episode, quality.

`parse_release_name(name)` turns a scene or p2p release name into a
`ParsedName`. It is Django-free, uses no regular expressions, and costs time
linear in the name: the name is cut to `MAX_NAME_LENGTH` characters and into
at most `MAX_TOKENS` tokens, and each token is looked at a bounded number of
times.

The interface (`ParsedName`, `parse_release_name`, `KINDS`, `FIELDS_VERSION`)
is what the catalog stores and searches on; bump `FIELDS_VERSION` whenever a
change to the parser can change a stored field, so the backfill command
(`manage.py parse_release_names`) knows which releases to parse again.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from .numbers import ascii_digits

# Bump when the parser changes what it returns for some name.
FIELDS_VERSION = 1

MAX_NAME_LENGTH = 512
MAX_TOKENS = 64

KINDS = ("tv", "movie", "anime", "audio", "book", "software", "other")


@dataclass(frozen=True, slots=True)
class ParsedName:
    """The fields of one release name; absent fields are None or empty."""

    kind: str = "other"
    # The title as a person writes it ("The Show"), and its search key: lower
    # case, letters and digits only, words joined by one space ("the show").
    title: str = ""
    title_key: str = ""
    year: int | None = None
    # Seasons covered: one for an episode or a pack, several for a multi-season pack.
    seasons: tuple[int, ...] = ()
    # Episode numbers within the season (a multi-episode name has several).
    episodes: tuple[int, ...] = ()
    # Absolute episode numbers (anime numbering without a season).
    absolute_episodes: tuple[int, ...] = ()
    # A daily show's air date.
    air_date: datetime.date | None = None
    # A whole season (or several), no episode numbers.
    full_season: bool = False
    special: bool = False
    # Vertical resolution: 480, 576, 720, 1080, 2160.
    resolution: int | None = None
    source: str | None = None
    codec: str | None = None
    edition: str | None = None
    languages: tuple[str, ...] = ()
    group: str | None = None
    proper: bool = False
    repack: bool = False


_DIGITS = frozenset("0123456789")
_SEPARATORS = str.maketrans({c: " " for c in "._[](){}+,;"})

_RESOLUTIONS = {
    "480p": 480,
    "576p": 576,
    "720p": 720,
    "1080p": 1080,
    "1080i": 1080,
    "2160p": 2160,
    "4k": 2160,
    "uhd": 2160,
}
_SOURCES = {
    "bluray": "bluray",
    "blu-ray": "bluray",
    "bdrip": "bluray",
    "brrip": "bluray",
    "remux": "remux",
    "web-dl": "webdl",
    "webdl": "webdl",
    "webrip": "webrip",
    "web": "webdl",
    "hdtv": "hdtv",
    "pdtv": "hdtv",
    "sdtv": "hdtv",
    "dvdrip": "dvd",
    "dvdr": "dvd",
    "dvd": "dvd",
}
_CODECS = {
    "x264": "h264",
    "h264": "h264",
    "avc": "h264",
    "x265": "h265",
    "h265": "h265",
    "hevc": "h265",
    "xvid": "xvid",
    "divx": "xvid",
}


def _title_key(words: list[str]) -> str:
    out = []
    for word in words:
        kept = "".join(c for c in word.lower() if c.isalnum())
        if kept:
            out.append(kept)
    return " ".join(out)


def _season_episode(token: str) -> tuple[int, tuple[int, ...]] | None:
    """`s01e02` / `s01e02e03` / `s01` (episodes empty) → (season, episodes)."""
    if len(token) < 2 or token[0] != "s" or token[1] not in _DIGITS:
        return None
    i = 1
    while i < len(token) and token[i] in _DIGITS:
        i += 1
    if i - 1 > 4:
        return None
    season = int(token[1:i])
    episodes: list[int] = []
    while i < len(token):
        if token[i] != "e":
            return None
        j = i + 1
        while j < len(token) and token[j] in _DIGITS:
            j += 1
        if j == i + 1 or j - i - 1 > 4:
            return None
        episodes.append(int(token[i + 1 : j]))
        i = j
    return season, tuple(episodes)


def parse_release_name(name: str) -> ParsedName:
    """The fields of a release name (see the module docstring)."""
    text = name[:MAX_NAME_LENGTH]
    group = None
    dash = text.rfind("-")
    if dash > 0 and " " not in text[dash:].strip() and 0 < len(text) - dash - 1 <= 30:
        group = text[dash + 1 :].strip() or None
        text = text[:dash]
    tokens = text.translate(_SEPARATORS).split()[:MAX_TOKENS]
    title_words: list[str] = []
    title_done = False
    year = None
    seasons: tuple[int, ...] = ()
    episodes: tuple[int, ...] = ()
    resolution = source = codec = None
    proper = repack = False
    for token in tokens:
        low = token.lower()
        if low in _RESOLUTIONS:
            resolution = resolution or _RESOLUTIONS[low]
            title_done = True
            continue
        if low in _SOURCES:
            source = source or _SOURCES[low]
            title_done = True
            continue
        if low in _CODECS:
            codec = codec or _CODECS[low]
            title_done = True
            continue
        if low == "proper":
            proper = title_done = True
            continue
        if low == "repack":
            repack = title_done = True
            continue
        found = _season_episode(low)
        if found is not None and not seasons:
            seasons, episodes = (found[0],), found[1]
            title_done = True
            continue
        if (
            len(low) == 4
            and ascii_digits(low)
            and 1900 <= int(low) <= 2099
            and title_words
            and year is None
        ):
            year = int(low)
            title_done = True
            continue
        if not title_done:
            title_words.append(token)
    if seasons:
        kind = "tv"
    elif year is not None or resolution is not None or source is not None:
        kind = "movie"
    else:
        kind = "other"
    return ParsedName(
        kind=kind,
        title=" ".join(title_words),
        title_key=_title_key(title_words),
        year=year,
        seasons=seasons,
        episodes=episodes,
        full_season=bool(seasons) and not episodes,
        resolution=resolution,
        source=source,
        codec=codec,
        group=group,
        proper=proper,
        repack=repack,
    )


__all__ = [
    "FIELDS_VERSION",
    "KINDS",
    "MAX_NAME_LENGTH",
    "MAX_TOKENS",
    "ParsedName",
    "parse_release_name",
]
