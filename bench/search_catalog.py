"""A catalog of releases for bench/bench_search.py, spliced from real release names.

The names of tests/usenet/data (Sonarr's and Radarr's parser fixtures, and the
held-out names of guessit and parse-torrent-name) are read by the project's
parser. A name whose title can be cut out, and whose numbers (season and
episode, year, air date, absolute episode) can be put back as other values,
becomes a template: its words before the title, its separator, and the rest
with placeholders. Each template is checked by parsing it filled with other
values: the fields must move with the values and nothing else may change
(the kind, the resolution, the category). Music, books and software, which
the corpora lack, get a few scene-shaped templates of their own.

The releases are then made in SQL (`INSERT … SELECT … generate_series`): a
template of the release's kind, a title (the corpora's titles, then each with
a word of a vocabulary added; rank r drawn with probability ∝ r^(-1/2), so the
commonest title is in ≈ 0.2 % of the releases, a long show), new numbers, the
fields the template's parse gave with those numbers. What a real catalog
looks like: half TV, a quarter movies; most releases listed (complete), the
newest ones less often (still arriving); posting dates one every ~3 s with
hours of jitter, so id order is only roughly date order.
"""

from __future__ import annotations

import datetime
import json
import random
from dataclasses import dataclass
from pathlib import Path

from usenet.categories import category_from_fields
from usenet.release_names import ParsedName, parse_release_name

DATA = Path(__file__).resolve().parent.parent / "tests" / "usenet" / "data"
CORPORA = ("release_names.json", "release_names_holdout.json")
SEPARATORS = " ._-"
VOCABULARY = 3_000
# The share of each kind among the releases (the rest: other).
KIND_SHARES = {"tv": 0.50, "movie": 0.25, "anime": 0.07, "audio": 0.09, "book": 0.04,
               "software": 0.04}  # fmt: skip
GROUPS = {
    "tv": ["alt.binaries.teevee", "alt.binaries.hdtv", "alt.binaries.hdtv.x264",
           "alt.binaries.tv", "alt.binaries.multimedia"],
    "movie": ["alt.binaries.moovee", "alt.binaries.hdtv.x264", "alt.binaries.movies",
              "alt.binaries.bluray", "alt.binaries.multimedia"],
    "anime": ["alt.binaries.anime", "alt.binaries.multimedia.anime.highspeed"],
    "audio": ["alt.binaries.sounds.flac", "alt.binaries.sounds.mp3", "alt.binaries.mp3"],
    "book": ["alt.binaries.e-book", "alt.binaries.ebook", "alt.binaries.audiobooks"],
    "software": ["alt.binaries.warez", "alt.binaries.cd.image", "alt.binaries.games"],
    "other": ["alt.binaries.misc"],
}  # fmt: skip
# Scene-shaped names of the kinds the corpora lack ({T}: the title, dotted).
SYNTHETIC = {
    "audio": ["{T}-{T2}-{Y}-FLAC-GRP", "{T}-{T2}-WEB-{Y}-GRP", "{T}-{T2}-(CD)-{Y}-FLAC-GRP",
              "{T}_-_{T2}-{Y}-MP3-320-GRP"],
    "book": ["{T}.{T2}.{Y}.RETAIL.EPUB.eBook-GRP", "{T} - {T2} ({Y}) (epub)",
             "{T}.{T2}.Audiobook.{Y}-GRP"],
    "software": ["{T}.{T2}.v{V}.Incl.Keygen-GRP", "{T}.{T2}.v{V}.x64-GRP",
                 "{T}.{T2}.MULTi5-PLAZA"],
}  # fmt: skip


@dataclass
class Template:
    kind: str
    prefix: str  # before the title ("[Group] ")
    separator: str  # between the title's words
    rest: str  # after the title, with placeholders {SE} {Y} {D} {D-} {D_} {A}
    category: int
    year: int | None
    seasons: list[int]
    episodes: list[int]
    absolute: list[int]
    air_date: datetime.date | None
    full_season: bool
    resolution: int | None
    source: str | None
    codec: str | None
    group: str | None


# Daily shows, which the corpora hardly have (one name), in three common forms;
# each counts DAILY_WEIGHT times, so about one TV release in twenty is a daily's.
DAILY = ["Quorvin.Dallet.2016.03.09.Guest.Name.720p.HDTV.x264-SORNY",
         "Quorvin Dallet 2016-03-09 Guest Name 1080p WEB h264-TBS",
         "Quorvin.Dallet.2016.03.09.1080p.WEB.h264-TBS"]  # fmt: skip
DAILY_WEIGHT = 15


def _corpus_names() -> list[str]:
    names: list[str] = []
    for corpus in CORPORA:
        names += [row["name"] for row in json.loads((DATA / corpus).read_text())["names"]]
    return list(dict.fromkeys(names))


def _title_span(name: str, title_key: str) -> tuple[int, int, str] | None:
    """Where the title's words are in the name, one after another, and the
    separator between them; None when they are not there as written."""
    low = name.lower()
    words = title_key.split()
    start = low.find(words[0])
    if start < 0 or (start > 0 and low[start - 1] not in SEPARATORS + "]"):
        return None
    end = start + len(words[0])
    separator = "."
    for word in words[1:]:
        gap = end
        while gap < len(low) and low[gap] in SEPARATORS:
            gap += 1
        if gap == end or not low.startswith(word, gap):
            return None
        separator = name[end:gap]
        end = gap + len(word)
    if end < len(low) and low[end] not in SEPARATORS + "([":
        return None
    return start, end, separator


def _fill(rest: str, se: tuple[int, int], year: int, day: datetime.date, absolute: int) -> str:
    return (
        rest.replace("{SE}", f"S{se[0]:02d}E{se[1]:02d}")
        .replace("{Y}", str(year))
        .replace("{D}", day.strftime("%Y.%m.%d"))
        .replace("{D-}", day.strftime("%Y-%m-%d"))
        .replace("{D_}", day.strftime("%Y %m %d"))
        .replace("{A}", f"{absolute:03d}")
    )


def _placeholders(parsed: ParsedName, rest: str) -> str | None:
    """The rest with its numbers as placeholders; None when one cannot be found once.
    A daily show's year is its air date's (the load sets it so)."""
    if parsed.seasons and parsed.episodes:
        if len(parsed.seasons) > 1 or len(parsed.episodes) > 1:
            return None
        token = f"s{parsed.seasons[0]:02d}e{parsed.episodes[0]:02d}"
        at = rest.lower().find(token)
        if at < 0 or rest.lower().count(token) != 1:
            return None
        rest = rest[:at] + "{SE}" + rest[at + len(token) :]
    if parsed.air_date is not None:
        for form, placeholder in (("%Y.%m.%d", "{D}"), ("%Y-%m-%d", "{D-}"), ("%Y %m %d", "{D_}")):
            written = parsed.air_date.strftime(form)
            if rest.count(written) == 1:
                rest = rest.replace(written, placeholder)
                break
        else:
            return None
    if parsed.year is not None and (parsed.air_date is None or parsed.air_date.year != parsed.year):
        if rest.count(str(parsed.year)) != 1:
            return None
        rest = rest.replace(str(parsed.year), "{Y}")
    if parsed.absolute_episodes:
        if len(parsed.absolute_episodes) > 1:
            return None
        token = f" {parsed.absolute_episodes[0]:03d}"
        if rest.count(token) != 1:
            token = f" {parsed.absolute_episodes[0]:02d}"
            if rest.count(token) != 1:
                return None
        rest = rest.replace(token, " {A}")
    return rest


def _fields_key(parsed: ParsedName) -> tuple[object, ...]:
    return (parsed.kind, parsed.resolution, parsed.full_season, bool(parsed.seasons),
            bool(parsed.episodes), bool(parsed.absolute_episodes), parsed.air_date is None,
            parsed.year is None, parsed.source, parsed.codec)  # fmt: skip


def _checked(kind: str, prefix: str, separator: str, rest: str) -> Template | None:
    """The template, when names made from it parse to its values (two titles, two
    sets of numbers); None otherwise."""
    made: list[ParsedName] = []
    for title, se, year, day, absolute in (
        (["quorvin", "dallet"], (7, 13), 1987, datetime.date(2016, 3, 9), 117),
        (["belmont", "ostavik", "renner"], (11, 2), 2019, datetime.date(2021, 11, 23), 42),
    ):
        name = (
            prefix
            + separator.join(w.capitalize() for w in title)
            + _fill(rest, se, year, day, absolute)
        )
        parsed = parse_release_name(name)
        if parsed.title_key != " ".join(title) or parsed.kind != kind:
            return None
        if "{SE}" in rest and (parsed.seasons, parsed.episodes) != ((se[0],), (se[1],)):
            return None
        if "{Y}" in rest and parsed.year != year:
            return None
        if "{D" in rest and (parsed.air_date != day or parsed.year not in (None, day.year)):
            return None
        if "{A}" in rest and parsed.absolute_episodes != (absolute,):
            return None
        made.append(parsed)
    first, second = made
    if _fields_key(first) != _fields_key(second) or (
        "{SE}" not in rest and (first.seasons, first.episodes) != (second.seasons, second.episodes)
    ):
        return None
    category = category_from_fields(first)
    if category != category_from_fields(second):
        return None
    return Template(
        kind=kind, prefix=prefix, separator=separator, rest=rest, category=category,
        year=first.year, seasons=list(first.seasons), episodes=list(first.episodes),
        absolute=list(first.absolute_episodes), air_date=first.air_date,
        full_season=first.full_season, resolution=first.resolution, source=first.source,
        codec=first.codec, group=first.group,
    )  # fmt: skip


def templates() -> list[Template]:
    """Every usable template of the corpora's TV, anime and movie names, and the
    synthetic ones of music, books and software."""
    found: list[Template] = []
    for name in _corpus_names():
        parsed = parse_release_name(name)
        if parsed.kind not in ("tv", "movie", "anime") or not parsed.title_key:
            continue
        span = _title_span(name, parsed.title_key)
        if span is None:
            continue
        start, end, separator = span
        rest = _placeholders(parsed, name[end:])
        if rest is None:
            continue
        template = _checked(parsed.kind, name[:start], separator, rest)
        if template is not None:
            found.append(template)
    for name in DAILY:
        parsed = parse_release_name(name)
        start, end, separator = _title_span(name, parsed.title_key) or (0, 0, ".")
        rest = _placeholders(parsed, name[end:])
        template = _checked(parsed.kind, name[:start], separator, rest) if rest else None
        assert template is not None, f"the daily template {name} parses as it should"
        found += [template] * DAILY_WEIGHT
    for kind, forms in SYNTHETIC.items():
        for form in forms:
            head, _, tail = form.partition("{T}")
            parsed = parse_release_name(
                form.replace("{T}", "Quorvin.Dallet").replace("{T2}", "Belmont.Ostavik")
                .replace("{Y}", "2019").replace("{V}", "3.2")
            )  # fmt: skip
            category = category_from_fields(parsed, GROUPS[kind][:1])
            found.append(
                Template(
                    kind=kind,
                    prefix=head,
                    separator=".",
                    rest=tail,
                    category=category,
                    year=None,
                    seasons=[],
                    episodes=[],
                    absolute=[],
                    air_date=None,
                    full_season=False,
                    resolution=None,
                    source=None,
                    codec=None,
                    group="GRP",
                )
            )
    return found


def vocabulary(seed: int = 7) -> list[str]:
    """Made-up words (no corpus title holds them), for titles and synthetic names."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ran", "te", "vor", "su", "dan", "el", "quin", "bar", "zo",
                 "pe", "tis", "mon", "ga", "rul", "fe", "ne", "shi"]  # fmt: skip
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    ordered = sorted(words)  # a set's order changes from one process to the next
    rng.shuffle(ordered)
    return ordered


def base_titles() -> list[str]:
    """The corpora's titles made of letters only (title keys: lower case, one space)."""
    titles: dict[str, None] = {}
    for name in _corpus_names():
        key = parse_release_name(name).title_key
        if key and all(word.isalpha() and word.isascii() for word in key.split()):
            titles[key] = None
    return sorted(titles)
