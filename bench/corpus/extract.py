"""Build tests/usenet/data/release_names.json from Sonarr's and Radarr's parser tests.

The corpus of real release names that bench/bench_names.py and
tests/usenet/test_release_corpus.py measure the release-name parser against
(issue 25, "Measure"). Its names and expected values are the `[TestCase(...)]`
attributes of the public parser test fixtures of Sonarr and Radarr: the names
their users meet, with what those tools read from them.

Run it on a checkout or a bare git directory of each repository:

    python bench/corpus/extract.py --sonarr PATH --radarr PATH [--out FILE]

Only the names and the expected values are written, with each fixture's
repository, path and commit; none of the fetched code is kept. Nothing at
test time needs the repositories: the data file is committed (the tests
check this script's C# reader and category rule on text of their own).

What each test method's arguments mean is written below, method by method
(METHODS): a fixture's argument is a title here, a season there, and an
unknown method is left out (counted under "dropped"). A row gives a field
only where its fixture states it: a quality fixture says nothing of the
season, a season fixture nothing of the resolution.

The expected newznab category (CATEGORY_RULE below, repeated in the data
file's "about"):

- TV (Sonarr's fixtures, and the TV names in Radarr's: kind conflicts):
  5045 TV/UHD for a 2160p quality, 5040 TV/HD for 720p and 1080p (raw HD
  included), 5030 TV/SD for the SD qualities (SDTV, DVD, 480p and 576p).
- Anime (Sonarr's anime fixtures: absolute numbering, Chinese fansub
  releases, anime metadata, versions and sub groups, and its anime release
  group test): 5070 TV/Anime whatever the resolution. That is Sonarr's own
  filing, so an anime name with SxxEyy is anime too.
- Movies (Radarr's fixtures): 2045 Movies/UHD for 2160p (UHD before
  disc: clients pick UHD by that id); 2050 Movies/BluRay for untouched
  BluRay content: a full disc (BR-DISK) or a 1080p remux (the disc's
  streams, not re-encoded: what nZEDb and newznab file under Movies/BluRay);
  2040 Movies/HD for 720p and 1080p encodes from any source, BluRay ones
  included (Radarr itself reads a 720p "remux" as Bluray-720p); 2030
  Movies/SD for SD qualities, DVD-R discs, CAM and telesync. 2060 Movies/3D
  is in the rule but no fixture states 3D, so no row expects it.
- A TV name opening with a bracketed tag (the fansub convention) also
  accepts 5070: Sonarr's quality fixture holds anime it files by quality.
- No category where the fixture states no quality (SingleEpisode, Season,
  Multi, Daily, MiniSeries, release group, language...; Radarr's
  ParserFixture): those rows give the top level only (TV 5000 or Movies
  2000), which is measured on every row.

Beyond the fixtures issue 25 names, those whose names are as real but whose
tests state less (a release group, a language, an edition, a year) are read
too: their names are measured on the top level and what they do state.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "usenet" / "data" / "release_names.json"
PARSER_TESTS = "src/NzbDrone.Core.Test/ParserTests/"

# ---------------------------------------------------------------- C# reading
#
# A small lexer for the C# these fixtures are written in: strings (regular,
# with escapes, and verbatim @"..."), numbers, identifiers and punctuation;
# comments are skipped, so a commented-out [TestCase] is not read.

_DIGITS = frozenset("0123456789")
_IDENT_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENT = _IDENT_START | _DIGITS
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    '"': '"',
    "'": "'",
}


@dataclass(frozen=True)
class Token:
    kind: str  # "str", "num", "id", "punct"
    text: str
    value: Any = None


def _regular_string(source: str, i: int, quote: str) -> tuple[str, int]:
    """The string literal opening at source[i] (a quote); (value, index after it)."""
    out: list[str] = []
    i += 1
    while source[i] != quote:
        c = source[i]
        if c == "\\":
            e = source[i + 1]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
                i += 2
            elif e == "u":
                out.append(chr(int(source[i + 2 : i + 6], 16)))
                i += 6
            elif e == "U":
                out.append(chr(int(source[i + 2 : i + 10], 16)))
                i += 10
            elif e == "x":  # \x takes 1 to 4 hex digits
                j = i + 2
                while j < i + 6 and source[j] in "0123456789abcdefABCDEF":
                    j += 1
                out.append(chr(int(source[i + 2 : j], 16)))
                i = j
            else:
                raise ValueError(f"unknown C# escape \\{e} at {i}")
        else:
            out.append(c)
            i += 1
    return "".join(out), i + 1


def _verbatim_string(source: str, i: int) -> tuple[str, int]:
    """The verbatim literal @"..." whose quote is at source[i]; "" is one quote."""
    out: list[str] = []
    i += 1
    while True:
        c = source[i]
        if c == '"':
            if source[i + 1 : i + 2] == '"':
                out.append('"')
                i += 2
                continue
            return "".join(out), i + 1
        out.append(c)
        i += 1


def tokens(source: str) -> Iterator[Token]:
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c in " \t\r\n\ufeff":
            i += 1
        elif source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end + 1
        elif source.startswith("/*", i):
            i = source.index("*/", i + 2) + 2
        elif c == "@" and source[i + 1 : i + 2] == '"':
            value, i = _verbatim_string(source, i + 1)
            yield Token("str", value, value)
        elif c == '"':
            value, i = _regular_string(source, i, '"')
            yield Token("str", value, value)
        elif c == "'":
            value, i = _regular_string(source, i, "'")
            yield Token("str", value, value)
        elif c in _DIGITS:
            j = i
            while j < n and (source[j] in _DIGITS or source[j] == "."):
                j += 1
            text = source[i:j]
            while j < n and source[j] in "mMdDfFlLuU":  # 12.5m, 1L
                j += 1
            yield Token("num", text, float(text) if "." in text else int(text))
            i = j
        elif c in _IDENT_START:
            j = i
            while j < n and source[j] in _IDENT:
                j += 1
            yield Token("id", source[i:j])
            i = j
        else:
            yield Token("punct", c)
            i += 1


class _Reader:
    def __init__(self, toks: list[Token]) -> None:
        self.toks, self.i = toks, 0

    def peek(self, ahead: int = 0) -> Token | None:
        j = self.i + ahead
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        tok = self.next()
        if tok.text != text:
            raise ValueError(f"expected {text!r}, found {tok.text!r}")

    def at(self, *texts: str) -> bool:
        return all(
            (tok := self.peek(k)) is not None and tok.kind != "str" and tok.text == t
            for k, t in enumerate(texts)
        )


def _value(r: _Reader) -> Any:
    """One argument value: a literal, an array, or a dotted name (an enum member)."""
    tok = r.next()
    if tok.kind in ("str", "num"):
        return tok.value
    if tok.text == "-":
        return -_value(r)
    if tok.text == "(":  # a cast: (decimal)12.5
        while r.next().text != ")":
            pass
        return _value(r)
    if tok.text == "new":
        previous = tok
        while not r.at("{"):  # new[] / new string[] / new int[] / new string[0]
            tok = r.next()
            if tok.text == "]" and previous.kind == "num" and not r.at("{"):
                return [None] * previous.value
            previous = tok
        r.expect("{")
        items = []
        while not r.at("}"):
            items.append(_value(r))
            if r.at(","):
                r.next()
        r.expect("}")
        return items
    if tok.kind == "id":
        if tok.text in ("true", "false"):
            return tok.text == "true"
        if tok.text == "null":
            return None
        name = tok.text
        while r.at("."):
            r.next()
            name += "." + r.next().text
        return name
    raise ValueError(f"unexpected {tok.text!r} in a TestCase")


@dataclass
class TestCase:
    args: list[Any]
    named: dict[str, Any]


@dataclass
class Method:
    name: str
    params: list[str]
    cases: list[TestCase] = field(default_factory=list)


def test_methods(source: str) -> list[Method]:
    """Each method with the [TestCase(...)] attributes standing before it."""
    r = _Reader(list(tokens(source)))
    methods: list[Method] = []
    pending: list[TestCase] = []
    while r.peek() is not None:
        if r.at("[", "TestCase", "("):
            r.i += 3
            case = TestCase([], {})
            while not r.at(")"):
                tok, after = r.peek(), r.peek(1)
                if tok and after and tok.kind == "id" and after.text == "=":
                    r.i += 2
                    case.named[tok.text] = _value(r)
                else:
                    case.args.append(_value(r))
                if r.at(","):
                    r.next()
            r.expect(")")
            pending.append(case)
        elif r.at("public", "void"):
            r.i += 2
            name = r.next().text
            r.expect("(")
            params: list[str] = []
            depth, last = 0, ""
            while depth or not r.at(")"):
                tok = r.next()
                if tok.text in "([<":
                    depth += 1
                elif tok.text in ")]>":
                    depth -= 1
                elif tok.text == "," and not depth:
                    params.append(last)
                elif tok.text == "=" and not depth:
                    params.append(last)
                    last = ""
                    while not (r.at(",") or r.at(")")):
                        r.next()
                    if r.at(","):
                        r.next()
                    continue
                if tok.kind == "id":
                    last = tok.text
            r.expect(")")
            if last:
                params.append(last)
            methods.append(Method(name, params, pending))
            pending = []
        else:
            r.next()
    return methods


# --------------------------------------------------------- what tests state
#
# Qualities: Sonarr's Quality enum (NzbDrone.Core.Qualities.Quality) and
# Radarr's (QualitySource, Resolution, Modifier), as (resolution class,
# source). The class is 2160, 1080, 720 or "sd" (below 720, or an SD quality
# whose name may state no resolution at all).

QUALITIES: dict[str, tuple[int | str, str]] = {
    "SDTV": ("sd", "tv"),
    "DVD": ("sd", "dvd"),
    "DVDR": ("sd", "dvdr"),
    "TELESYNC": ("sd", "telesync"),
    "CAM": ("sd", "cam"),
    "WEBDL480p": ("sd", "webdl"),
    "WEBRip480p": ("sd", "webrip"),
    "Bluray480p": ("sd", "bluray"),
    "Bluray576p": ("sd", "bluray"),
    "HDTV720p": (720, "tv"),
    "HDTV1080p": (1080, "tv"),
    "HDTV2160p": (2160, "tv"),
    "RAWHD": (1080, "rawhd"),
    "WEBDL720p": (720, "webdl"),
    "WEBRip720p": (720, "webrip"),
    "WEBDL1080p": (1080, "webdl"),
    "WEBRip1080p": (1080, "webrip"),
    "WEBDL2160p": (2160, "webdl"),
    "WEBRip2160p": (2160, "webrip"),
    "Bluray720p": (720, "bluray"),
    "Bluray1080p": (1080, "bluray"),
    "Bluray2160p": (2160, "bluray"),
    "Remux1080p": (1080, "remux"),
    "Remux2160p": (2160, "remux"),
    "BRDISK1080p": (1080, "brdisk"),
}

# The quality each quality-fixture method asserts (Sonarr and Radarr name them alike).
QUALITY_METHODS: dict[str, str | None] = {
    "should_parse_ts": "TELESYNC",
    "should_parse_cam": "CAM",
    "should_parse_sdtv_quality": "SDTV",
    "should_parse_dvd_quality": "DVD",
    "should_parse_dvdr_quality": "DVDR",
    "should_parse_webdl480p_quality": "WEBDL480p",
    "should_parse_webrip480p_quality": "WEBRip480p",
    "should_parse_bluray480p_quality": "Bluray480p",
    "should_parse_bluray576p_quality": "Bluray576p",
    "should_parse_hdtv720p_quality": "HDTV720p",
    "should_parse_hdtv1080p_quality": "HDTV1080p",
    "should_parse_hdtv2160p_quality": "HDTV2160p",
    "should_parse_webdl720p_quality": "WEBDL720p",
    "should_parse_webrip720p_quality": "WEBRip720p",
    "should_parse_webdl1080p_quality": "WEBDL1080p",
    "should_parse_webrip1080p_quality": "WEBRip1080p",
    "should_parse_webdl2160p_quality": "WEBDL2160p",
    "should_parse_webrip2160p_quality": "WEBRip2160p",
    "should_parse_bluray720p_quality": "Bluray720p",
    "should_parse_remux720p_as_bluray720p_quality": "Bluray720p",
    "should_parse_bluray1080p_quality": "Bluray1080p",
    "should_parse_bluray2160p_quality": "Bluray2160p",
    "should_parse_bluray1080p_remux_quality": "Remux1080p",
    "should_parse_remux1080p_quality": "Remux1080p",
    "should_parse_bluray2160p_remux_quality": "Remux2160p",
    "should_parse_remux2160p_quality": "Remux2160p",
    "should_parse_brdisk_1080p_quality": "BRDISK1080p",
    "should_parse_raw_quality": "RAWHD",
    # Quality.Unknown: the name is the tool's, its quality unknown.
    "quality_parse": None,
    # Where the quality was read from (name, extension), not which one it is.
    "should_parse_full_quality_from_name": None,
    "should_parse_resolution_from_name": None,
    "should_parse_source_from_name": None,
    "should_parse_quality_from_extension": None,
    "should_parse_resolution_from_name_and_source_from_extension": None,
    "should_be_able_to_parse_repack": None,
    "should_be_able_to_parse_anime_version": None,
}


def category(kind: str, quality: str | None) -> int | None:
    """The expected newznab id (CATEGORY_RULE in the module docstring); None: not stated."""
    if kind == "anime":
        return 5070
    if quality is None:
        return None
    resolution, source = QUALITIES[quality]
    if kind == "tv":
        if resolution == 2160:
            return 5045
        return 5040 if resolution in (720, 1080) else 5030
    if resolution == 2160:
        return 2045
    if source == "brdisk" or (source == "remux" and resolution == 1080):
        return 2050
    if resolution in (720, 1080):
        return 2040
    return 2030


CATEGORY_RULE = [
    "TV: 5045 for a 2160p quality, 5040 for 720p/1080p (raw HD included), 5030 for SD"
    " qualities (SDTV, DVD, 480p, 576p).",
    "Anime (Sonarr's anime fixtures and anime test methods): 5070 whatever the resolution.",
    "Movies: 2045 for 2160p; 2050 for a full BluRay disc (BR-DISK) or a 1080p remux;"
    " 2040 for 720p/1080p encodes of any source; 2030 for SD, DVD-R, CAM and telesync;"
    " 2060 (3D) is never expected: no fixture states 3D.",
    "A TV name that opens with a bracketed tag, the fansub convention ('[HorribleSubs]"
    " Series Title - 32 [1080p]'), also accepts 5070 (category_also): such names in"
    " Sonarr's quality fixture are anime that the fixture files by quality only.",
    "No category where the fixture states no quality: those rows are measured on the"
    " top level only (5000 TV, 2000 Movies), which every row gives.",
]


def _date(p: dict[str, Any]) -> str:
    return datetime.date(p["year"], p["month"], p["day"]).isoformat()


# Per method: a function from its arguments (by parameter name) to the row's
# stated fields, or a string: the reason its cases are left out.
Spec = Callable[[dict[str, Any]], dict[str, Any]] | str


def _single(p: dict[str, Any]) -> dict[str, Any]:
    return {"title": p["title"], "season": p["seasonNumber"], "episodes": [p["episodeNumber"]]}


MOVIE_TITLE: Spec = lambda p: {"title": p["title"]}  # noqa: E731
NOTHING: Spec = lambda p: {}  # noqa: E731
NOT_A_FACT = "a negative test: it states what the name does NOT parse to"
SUBTITLES = "a subtitle file's name, not a release name"


def _group(p: dict[str, Any]) -> dict[str, Any]:
    """The release group a group test expects (none stated where it expects none)."""
    return {"group": p["expected"]} if p.get("expected") else {}


METHODS: dict[str, dict[str, Spec]] = {
    "Sonarr SingleEpisodeParserFixture": {
        "should_parse_single_episode": _single,
        "should_parse_japanese_variety_show_format": _single,
        "should_parse_decimal_number_as_special": lambda p: {**_single(p), "special": True},
        "should_parse_split_episode": _single,
    },
    "Sonarr MultiEpisodeParserFixture": {
        "should_parse_multiple_episodes": lambda p: {
            "title": p["title"],
            "season": p["season"],
            "episodes": sorted(p["episodes"]),
        },
    },
    "Sonarr SeasonParserFixture": {
        # Sonarr reads each as a full season: no episode numbers.
        **{
            m: lambda p: {"title": p["title"], "season": p["season"], "full_season": True}
            for m in (
                "should_parse_full_season_release",
                "should_parse_season_extras",
                "should_parse_season_subpack",
                "should_parse_partial_season_release",
            )
        },
        "should_parse_multi_season_release": lambda p: {
            "title": p["title"],
            "season": p["firstSeason"],
            "full_season": True,
            "multi_season": True,
        },
    },
    "Sonarr DailyEpisodeParserFixture": {
        "should_parse_daily_episode": lambda p: {"title": p["title"], "air_date": _date(p)},
        "should_parse_daily_episode_with_multiple_parts": lambda p: {
            "title": p["title"],
            "air_date": _date(p),
        },
        "should_parse_daily_episode_using_short_month_format": lambda p: {
            "title": p["title"],
            "air_date": _date(p),
        },
        "should_not_accept_ancient_daily_series": NOT_A_FACT,
        "should_not_accept_future_dates": NOT_A_FACT,
        "should_not_parse_ambiguous_daily_episode": NOT_A_FACT,
    },
    "Sonarr MiniSeriesEpisodeParserFixture": {
        # Sonarr files a mini-series episode under season 1.
        "should_parse_mini_series_episode": lambda p: {
            "title": p["title"],
            "season": 1,
            "episodes": [p["episodeNumber"]],
        },
        # Its airdate argument is not asserted by the test ("not supported yet").
        "should_parse_korean_series_episode": lambda p: {
            "title": p["title"],
            "season": 1,
            "episodes": [p["episodeNumber"]],
        },
    },
    "Sonarr AbsoluteEpisodeNumberParserFixture": {
        "should_parse_absolute_numbers": lambda p: {
            "title": p["title"],
            "absolute": [p["absoluteEpisodeNumber"]],
            **(
                {"season": p["seasonNumber"], "episodes": [p["episodeNumber"]]}
                if p["seasonNumber"] or p["episodeNumber"]
                else {}
            ),
        },
        "should_parse_absolute_specials": lambda p: {
            "title": p["title"],
            "absolute": [p["absoluteEpisodeNumber"]],
            "special": True,
        },
        # The number argument is asserted absent: only the title and "special" hold.
        "should_parse_absolute_specials_without_absolute_number": lambda p: {
            "title": p["title"],
            "special": True,
        },
        "should_parse_multi_episode_absolute_numbers": lambda p: {
            "title": p["title"],
            "absolute": list(
                range(p["firstAbsoluteEpisodeNumber"], p["lastAbsoluteEpisodeNumber"] + 1)
            ),
        },
        "should_parse_anime_season_packs": lambda p: {
            "title": p["title"],
            "season": p["seasonNumber"],
            "full_season": True,
        },
        "should_handle_anime_recap_numbering": lambda p: {
            "title": p["title"],
            "special_absolute": p["specialEpisodeNumber"],
        },
        "should_parse_absolute_followed_by_standard_as_standard": lambda p: {
            "title": p["title"],
            "special_absolute": p["specialEpisodeNumber"],
            "season": p["seasonNumber"],
            "episodes": [p["episodeNumber"]],
        },
        "should_handle_ambiguously_named_anime_files_in_batch_release": (
            "a path test: its expected values are those of a file inside the release"
        ),
    },
    "Radarr ParserFixture": {
        "should_parse_movie_title": MOVIE_TITLE,
        "should_parse_movie_folder_name": MOVIE_TITLE,
        "should_parse_anime_movie_title": lambda p: {
            "title": p["title"],
            "group": p["releaseGroup"],
            "year": p["year"],
        },
        "should_parse_anime_movie_title_without_year": lambda p: {
            "title": p["title"],
            "group": p["releaseGroup"],
        },
        # year 0 asserts no year: the row then states none.
        "should_parse_german_movie": lambda p: {
            "title": p["title"],
            **({"edition": p["edition"]} if p["edition"] else {}),
            **({"year": p["year"]} if p["year"] else {}),
        },
        "should_parse_movie_alternative_titles": lambda p: {"title": p["parsedTitles"][0]},
        "should_parse_movie_year": lambda p: {"year": p["year"]},
        "should_parse_tmdb_id": lambda p: {"tmdb_id": p["tmdbId"]},
        "should_not_parse_wrong_language_in_title": lambda p: {},
        "should_parse_hardcoded_subs": lambda p: {},
        "should_parse_imdb_in_title": lambda p: {"imdb_id": p["imdb"]},
        "should_normalize_imdbid": "not a release name: an IMDb id on its own",
    },
}


def _quality_spec(quality: str | None) -> Spec:
    def spec(p: dict[str, Any]) -> dict[str, Any]:
        row: dict[str, Any] = {}
        if quality is not None:
            row["quality"] = quality
            row["resolution"], row["video_source"] = QUALITIES[quality]
        if p.get("proper"):
            row["proper"] = True
        return row

    return spec


for _tool in ("Sonarr", "Radarr"):
    METHODS[f"{_tool} QualityParserFixture"] = {
        m: _quality_spec(q) for m, q in QUALITY_METHODS.items()
    }
    METHODS[f"{_tool} ReleaseGroupParserFixture"] = {
        "should_parse_release_group": _group,
        "should_parse_exception_release_group": _group,
        "should_not_include_extension_in_release_group": _group,
        "should_not_include_language_in_release_group": _group,
        "should_not_include_repost_in_release_group": _group,
        "should_not_include_bad_suffix_in_release_group": _group,
        "should_parse_anime_release_groups": _group,
        "should_not_parse_anime_hash_as_release_group": NOTHING,
        "should_not_parse_episode_title_as_release_group": NOTHING,
    }
    METHODS[f"{_tool} UrlFixture"] = {
        "should_not_parse_url_in_name": MOVIE_TITLE,
        "should_not_parse_url_in_group": _group,
    }
    METHODS[f"{_tool} SceneCheckerFixture"] = {
        "should_return_true_for_scene_names": NOTHING,
        "should_return_false_for_non_scene_names": (
            "chosen for not being scene-shaped, some not a release name at all ('Something')"
        ),
        "should_correctly_parse_scene_names": NOTHING,
    }
    METHODS[f"{_tool} AnimeVersionFixture"] = {"should_be_able_to_parse_repack": NOTHING}
    # Every other method of a language fixture states only the language (not kept).
    METHODS[f"{_tool} LanguageParserFixture"] = {
        "should_parse_subtitle_language": SUBTITLES,
        "should_parse_subtitle_language_english": SUBTITLES,
        "should_parse_subtitle_language_unknown": SUBTITLES,
        "should_parse_title_and_tags": SUBTITLES,
        "*": NOTHING,
    }

METHODS["Sonarr ParserFixture"] = {
    "should_parse_series_name": "series names (ParseSeriesName), most of them not release names",
    # Sonarr reads the year of "Series (2022) S03E14" apart from the title.
    "should_parse_series_title_info": lambda p: {
        "title": p["titleWithoutYear"],
        **({"year": p["year"]} if p.get("year") else {}),
    },
    "should_remove_request_info_from_title": MOVIE_TITLE,
    "should_clean_up_invalid_path_characters": NOTHING,
    "should_parse_quality_from_extension": NOTHING,
    "should_parse_releasetitle": NOTHING,
    "should_parse_multiple_series_titles": NOTHING,
    "should_parse_language_after_parsing_title": NOTHING,
}


def _chinese_anime(p: dict[str, Any]) -> dict[str, Any]:
    return {"title": p["title"], "group": p["subgroup"], "absolute": [p["absoluteEpisodeNumber"]]}


METHODS["Sonarr UnicodeReleaseParserFixture"] = {
    "should_parse_chinese_anime_releases": _chinese_anime,
    "should_parse_chinese_anime_season_episode_releases": _chinese_anime,
    "should_parse_unbracketed_chinese_anime_releases": _chinese_anime,
    "should_parse_false_positive_chinese_anime_releases": _chinese_anime,
    "should_parse_chinese_multiepisode_releases": lambda p: {
        "title": p["title"],
        "group": p["subgroup"],
        "absolute": sorted(p["absoluteEpisodeNumbers"]),
    },
    "should_parse_gm_team_releases_and_files": lambda p: {
        "title": p["title"],
        "group": "GM-Team",
        "absolute": [p["absoluteEpisodeNumber"]],
    },
    "should_parse_unicode_digits": lambda p: {
        "title": p["title"],
        "absolute": [p["absoluteEpisodeNumber"]],
    },
    "should_parse_full_season_releases": lambda p: {
        "title": p["title"],
        "group": p["releaseGroup"],
        "season": p["season"],
        "full_season": True,
    },
    "should_parse_multi_episode_release": lambda p: {
        "title": p["title"],
        "season": p["season"],
        "episodes": sorted(p["episodes"]),
    },
}
METHODS["Sonarr AnimeMetadataParserFixture"] = {
    "should_parse_releasegroup_and_hash": lambda p: {"group": p["subGroup"]},
    "should_parse_release_hashes_with_10b_or_8b": NOTHING,
}
METHODS["Sonarr SubGroupParserFixture"] = {
    "should_parse_sub_group_from_title_as_release_group": _group,
}
METHODS["Radarr EditionParserFixture"] = {
    "should_parse_edition": lambda p: {"edition": p["edition"]},
    "should_not_parse_edition": NOTHING,
}


@dataclass(frozen=True)
class Fixture:
    repo: str
    name: str
    # The kind of its names, unless a method says otherwise (method_kinds) or a
    # row is a kind conflict.
    kind: str
    method_kinds: tuple[tuple[str, str], ...] = ()

    @property
    def path(self) -> str:
        return f"{PARSER_TESTS}{self.name}.cs"

    @property
    def methods(self) -> dict[str, Spec]:
        return METHODS[f"{self.repo.split('/')[0]} {self.name}"]


# The fixtures issue 25 names first, then those whose names are as real and
# whose tests state fewer facts (a release group, a language, an edition).
FIXTURES = (
    Fixture("Sonarr/Sonarr", "SingleEpisodeParserFixture", "tv"),
    Fixture("Sonarr/Sonarr", "MultiEpisodeParserFixture", "tv"),
    Fixture("Sonarr/Sonarr", "SeasonParserFixture", "tv"),
    Fixture("Sonarr/Sonarr", "DailyEpisodeParserFixture", "tv"),
    Fixture("Sonarr/Sonarr", "MiniSeriesEpisodeParserFixture", "tv"),
    Fixture("Sonarr/Sonarr", "AbsoluteEpisodeNumberParserFixture", "anime"),
    Fixture("Sonarr/Sonarr", "QualityParserFixture", "tv"),
    Fixture("Radarr/Radarr", "ParserFixture", "movie"),
    Fixture("Radarr/Radarr", "QualityParserFixture", "movie"),
    Fixture("Sonarr/Sonarr", "ParserFixture", "tv"),
    Fixture(
        "Sonarr/Sonarr",
        "UnicodeReleaseParserFixture",
        "anime",
        # A Chinese drama's names (S01, 2160p WEB-DL), not anime.
        (("should_parse_full_season_releases", "tv"), ("should_parse_multi_episode_release", "tv")),
    ),
    Fixture("Sonarr/Sonarr", "AnimeMetadataParserFixture", "anime"),
    Fixture("Sonarr/Sonarr", "AnimeVersionFixture", "anime"),
    Fixture("Sonarr/Sonarr", "SubGroupParserFixture", "anime"),
    Fixture(
        "Sonarr/Sonarr",
        "ReleaseGroupParserFixture",
        "tv",
        (("should_parse_anime_release_groups", "anime"),),
    ),
    Fixture("Sonarr/Sonarr", "LanguageParserFixture", "tv"),
    Fixture("Sonarr/Sonarr", "UrlFixture", "tv"),
    Fixture("Sonarr/Sonarr", "SceneCheckerFixture", "tv"),
    Fixture("Radarr/Radarr", "ReleaseGroupParserFixture", "movie"),
    Fixture("Radarr/Radarr", "LanguageParserFixture", "movie"),
    Fixture("Radarr/Radarr", "EditionParserFixture", "movie"),
    Fixture("Radarr/Radarr", "AnimeVersionFixture", "movie"),
    Fixture("Radarr/Radarr", "UrlFixture", "movie"),
    Fixture("Radarr/Radarr", "SceneCheckerFixture", "movie"),
)


# ------------------------------------------------------- names, not release names


def not_a_name(text: str) -> str | None:
    """Why a fixture's text is not a release name a newznab server could carry; None: it is."""
    if not text.strip():
        return "empty"
    if (len(text) > 2 and text[1] == ":" and text[2] in "\\/") or text.startswith(("/", "\\")):
        return "a file system path, not a release name"
    return None


def _tv_marker(text: str) -> bool:
    """Whether a name in a movie fixture is plainly a TV name: SxxEyy, Sxx, NxNN, a daily
    date, an anime episode " - 01 ", or the words Series/Season/Episode.

    Only used to mark Radarr's names as a kind conflict (the fixture files
    them as movies, the name says TV), so they are measured apart: a scan by
    character, no regular expression. A bare Sxx inside brackets is not a
    season ("Movie Name (2020) [2160p x265 10bit S82 Joy]")."""
    low = text.lower()
    words = "".join(c if c.isalnum() else " " for c in low).split()
    unbracketed = set("".join(c if c.isalnum() else " " for c in _unbracketed(low)).split())
    for w in words:
        if w in ("series", "season", "episode") or w.startswith("season"):
            return True
        if len(w) >= 2 and w[0] == "s" and w[1] in _DIGITS:
            rest = w[1:]
            digits = len(rest) - len(rest.lstrip("0123456789"))
            tail = rest[digits:]
            if digits <= 2 and tail[:1] == "e" and tail[1:2] in _DIGITS:
                return True
            if digits <= 2 and tail == "" and w in unbracketed:
                return True
        x = w.find("x")
        if 0 < x <= 2 and all(c in _DIGITS for c in w[:x]):
            after = w[x + 1 :]
            if 2 <= len(after) <= 3 and all(c in _DIGITS for c in after):
                return True
    # A daily date: 2016 03 14 (year, month, day as three words).
    for a, b, c in zip(words, words[1:], words[2:], strict=False):
        if (
            len(a) == 4
            and len(b) == len(c) == 2
            and all(ch in _DIGITS for ch in a + b + c)
            and 1 <= int(b) <= 12
            and 1 <= int(c) <= 31
        ):
            return True
    # An anime episode: "[Group] Name - 01 [...]".
    return text.startswith("[") and any(
        text[i : i + 3] == " - " and text[i + 3 : i + 5].isascii() and _two_digits(text, i + 3)
        for i in range(len(text))
    )


def _unbracketed(text: str) -> str:
    """text without what stands inside [...]."""
    out, depth = [], 0
    for c in text:
        depth += c == "["
        if not depth:
            out.append(c)
        depth -= c == "]" and depth > 0
    return "".join(out)


def _two_digits(text: str, i: int) -> bool:
    return (
        text[i : i + 1] in _DIGITS
        and text[i + 1 : i + 2] in _DIGITS
        and text[i + 2 : i + 3] not in _DIGITS
    )


# ---------------------------------------------------------------- assembling


def read_fixture(git_dir: Path, path: str) -> tuple[str, str]:
    """(source text, commit) of path in the checkout or bare git directory."""
    commit = subprocess.run(
        ["git", f"--git-dir={_git_dir(git_dir)}", "log", "-1", "--format=%H", "HEAD", "--", path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    text = subprocess.run(
        ["git", f"--git-dir={_git_dir(git_dir)}", "show", f"HEAD:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return text, commit


def _git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def _head(git_dir: Path) -> str:
    return subprocess.run(
        ["git", f"--git-dir={_git_dir(git_dir)}", "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def build(repos: dict[str, Path]) -> dict[str, Any]:
    sources: list[dict[str, Any]] = []
    rows: dict[tuple[int, str], dict[str, Any]] = {}
    dropped: Counter[str] = Counter()
    conflicts: list[str] = []
    sonarr_names: set[str] = set()
    for fixture in FIXTURES:
        text, last_change = read_fixture(repos[fixture.repo], fixture.path)
        index = len(sources)
        sources.append(
            {
                "repo": fixture.repo,
                "path": fixture.path,
                "commit": _head(repos[fixture.repo]),
                "last_changed_in": last_change,
                "fixture": fixture.name,
                "kind": fixture.kind,
            }
        )
        specs = fixture.methods
        method_kinds = dict(fixture.method_kinds)
        for method in test_methods(text):
            if not method.cases:
                continue
            spec = specs.get(method.name, specs.get("*"))
            if spec is None:
                spec = f"a test method whose arguments are not mapped ({method.name})"
            if isinstance(spec, str):
                dropped[f"{fixture.repo} {fixture.name}: {spec}"] += len(method.cases)
                continue
            for case in method.cases:
                args = dict(zip(method.params, case.args, strict=False))
                name = case.args[0]
                why = not_a_name(name) if isinstance(name, str) else "not a string"
                if why:
                    dropped[f"{fixture.repo} {fixture.name}: {why}"] += 1
                    continue
                facts = spec(args)
                kind = method_kinds.get(method.name, fixture.kind)
                row = {"name": name, "source": index, "kind": kind, **facts}
                if fixture.repo == "Sonarr/Sonarr":
                    sonarr_names.add(name)
                key = (index, name)
                if key in rows:
                    old = rows[key]
                    clash = [k for k in row if k in old and old[k] != row[k]]
                    if clash:
                        conflicts.append(f"{fixture.name}: {name!r} ({', '.join(clash)})")
                    merged = {**row, **old}
                    merged["tests"] = sorted({*old["tests"], method.name})
                    rows[key] = merged
                else:
                    row["tests"] = [method.name]
                    rows[key] = row
    for (index, name), row in rows.items():
        source = sources[index]
        if (
            source["kind"] == "movie"
            and row["kind"] == "movie"
            and (name in sonarr_names or _tv_marker(name))
        ):
            row["kind"] = "tv"
            row["kind_conflict"] = True
        expected = category(row["kind"], row.get("quality"))
        if expected is not None:
            row["category"] = expected
            if row["kind"] == "tv" and name.lstrip().startswith(("[", "\u3010")):
                row["category_also"] = [5070]
        row["top_level"] = 5000 if row["kind"] in ("tv", "anime") else 2000
    names = [rows[k] for k in sorted(rows)]
    if conflicts:
        raise SystemExit(
            "a name states two different facts in one fixture:\n" + "\n".join(conflicts)
        )
    return {
        "about": [
            "Real release names with what Sonarr and Radarr read from them: the"
            " [TestCase] names of their public parser test fixtures (sources below:"
            " repository, path, the commit read). Built by bench/corpus/extract.py;"
            " measured by bench/bench_names.py and tests/usenet/test_release_corpus.py.",
            "A row gives a field only where its fixture states it. kind: the fixture's"
            " (tv for Sonarr, anime for its anime fixtures and methods, movie for Radarr);"
            " kind_conflict: a plain TV name (SxxEyy, NxM, a daily date, an anime episode,"
            " or a name Sonarr's fixtures hold) in a Radarr fixture: kind tv, measured apart.",
            "resolution: 2160, 1080, 720, or 'sd' (below 720 or unstated, for an SD"
            " quality); video_source and quality: the fixture's quality.",
            "Category rule:",
            *CATEGORY_RULE,
            "A name stated twice by one fixture is one row (tests lists its test methods).",
        ],
        "dropped": dict(sorted(dropped.items())),
        "sources": sources,
        "names": names,
    }


def dump(data: dict[str, Any]) -> str:
    """The data file's text: indented, but one line per source and per name (a diff
    then shows the names that changed)."""
    parts = []
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n  ".join(json.dumps(v, ensure_ascii=False) for v in value)
            parts.append(f" {json.dumps(key)}: [\n  {items}\n ]")
        else:
            text = json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n ")
            parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sonarr", type=Path, required=True, help="checkout or bare git dir")
    parser.add_argument("--radarr", type=Path, required=True, help="checkout or bare git dir")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = build({"Sonarr/Sonarr": args.sonarr, "Radarr/Radarr": args.radarr})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dump(data))
    print(f"{len(data['names'])} names from {len(data['sources'])} fixtures -> {args.out}")
    for reason, count in data["dropped"].items():
        print(f"  dropped {count}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
