"""ParsedName, the fields usenet.release_names reads from a release name.

A module of its own, never compiled: setup.py compiles usenet/release_names.py
with mypyc, and a dataclass compiled there would be a native class, whose
instances have no dict to take at once (release_names._build). Import it from
usenet.release_names.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass


@dataclass(frozen=True)
class ParsedName:
    """The fields of one release name; absent fields are None or empty."""

    kind: str = "other"
    # The title as a person writes it ("The Show"), and its search key (see title_key).
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
    # Vertical resolution: 480, 576, 720, 1080, 1440, 2160. Where the name
    # gives a source but no resolution, the one Sonarr assumes for it
    # (BluRay 720, HDTV/WEB-DL/DVD 480).
    resolution: int | None = None
    source: str | None = None
    codec: str | None = None
    edition: str | None = None
    languages: tuple[str, ...] = ()
    group: str | None = None
    proper: bool = False
    repack: bool = False
    # Added in FIELDS_VERSION 2.
    # What the name says about its category beyond the kind: "3d", "disc"
    # (a whole BluRay disc), "documentary", "audiobook", "lossless", "mp3",
    # "music_video", "ebook", "comic", "game".
    tags: tuple[str, ...] = ()
    # A fansub's version ("- 09v2"): 2 and up is a fixed release.
    version: int | None = None
