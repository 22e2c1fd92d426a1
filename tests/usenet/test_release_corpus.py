"""The release-name corpus (tests/usenet/data/release_names.json) and issue 25's goals on it.

The corpus holds real names from Sonarr's and Radarr's parser test fixtures
with what those tools read from them; bench/bench_names.py prints the same
scores per fixture (tests/support/name_corpus.py scores both).
"""

from __future__ import annotations

import datetime
import importlib.util
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support import name_corpus
from tests.support.name_corpus import GOALS, judge, load, resolution_class, score
from usenet.release_names import ParsedName, title_key

SHA = frozenset("0123456789abcdef")
KINDS = {"tv", "movie", "anime"}
STATED = {
    "season": int,
    "episodes": list,
    "absolute": list,
    "air_date": str,
    "full_season": bool,
    "year": int,
    "category": int,
    "title": str,
}


def test_every_source_names_its_repository_path_and_commit():
    sources = load()["sources"]
    assert {s["repo"] for s in sources} == {"Sonarr/Sonarr", "Radarr/Radarr"}
    for source in sources:
        assert source["path"].startswith("src/NzbDrone.Core.Test/ParserTests/")
        assert source["path"].endswith(f"/{source['fixture']}.cs")
        assert len(source["commit"]) == 40 and set(source["commit"]) <= SHA


def test_every_row_has_a_name_a_source_a_kind_and_a_top_level():
    data = load()
    for row in data["names"]:
        assert isinstance(row["name"], str) and row["name"].strip(), row
        assert 0 <= row["source"] < len(data["sources"]), row
        assert row["kind"] in KINDS, row
        assert row["top_level"] == (2000 if row["kind"] == "movie" else 5000), row
        if "category" in row:
            assert row["category"] // 1000 * 1000 == row["top_level"], row
        for field, kind in STATED.items():
            assert field not in row or isinstance(row[field], kind), (field, row)
        if "air_date" in row:
            datetime.date.fromisoformat(row["air_date"])


def test_rows_are_sorted_and_unique_per_source():
    keys = [(row["source"], row["name"]) for row in load()["names"]]
    assert keys == sorted(keys)
    assert len(keys) == len(set(keys))


def test_each_fixture_gives_the_names_and_facts_it_states():
    data = load()
    per = Counter("{repo} {fixture}".format(**data["sources"][r["source"]]) for r in data["names"])
    assert len(data["names"]) >= 1500
    # Counts a re-extraction must keep near: a fixture read wrong loses most of its rows.
    least = {
        "Sonarr/Sonarr SingleEpisodeParserFixture": 150,
        "Sonarr/Sonarr SeasonParserFixture": 40,
        "Sonarr/Sonarr MultiEpisodeParserFixture": 60,
        "Sonarr/Sonarr DailyEpisodeParserFixture": 25,
        "Sonarr/Sonarr AbsoluteEpisodeNumberParserFixture": 130,
        "Sonarr/Sonarr QualityParserFixture": 250,
        "Radarr/Radarr ParserFixture": 80,
        "Radarr/Radarr QualityParserFixture": 240,
        "Sonarr/Sonarr ReleaseGroupParserFixture": 120,
        "Radarr/Radarr ReleaseGroupParserFixture": 120,
        "Sonarr/Sonarr LanguageParserFixture": 150,
        "Radarr/Radarr LanguageParserFixture": 130,
    }
    short = {f: per[f] for f, n in least.items() if per[f] < n}
    assert not short, short
    rows = data["names"]
    assert sum("category" in r for r in rows) >= 650
    assert sum("season" in r or "absolute" in r or "air_date" in r for r in rows) >= 500
    assert sum("year" in r for r in rows) >= 30
    conflicts = [r for r in rows if r.get("kind_conflict")]
    assert 100 <= len(conflicts) <= 200
    assert {data["sources"][r["source"]]["repo"] for r in conflicts} == {"Radarr/Radarr"}


def test_the_extraction_reads_csharp_escapes_and_leaves_paths_out():
    names = {row["name"] for row in load()["names"]}
    # "Series.Title.Inc.S03E19.DVDRip.\"XviD\"-OSiTV" and @"...CLUE\REWARD" in the C#.
    assert 'Series.Title.Inc.S03E19.DVDRip."XviD"-OSiTV' in names
    assert "Series.of.Sonarr.S03.720p.BluRay-CLUE\\REWARD" in names
    assert not any(name[1:3] == ":\\" for name in names)
    dropped = load()["dropped"]
    assert sum(dropped.values()) >= 1 and all(dropped.values())


# ---------------------------------------------------------------- the scoring


def _as_stated(row: dict) -> ParsedName:
    """What a parser reading every stated fact right would return."""
    return ParsedName(
        kind=row["kind"],
        title_key=title_key(row.get("title", "")),
        year=row.get("year"),
        seasons=(row["season"],) if "season" in row else (),
        episodes=tuple(row.get("episodes", ())),
        absolute_episodes=tuple(row.get("absolute", ())),
        air_date=datetime.date.fromisoformat(row["air_date"]) if "air_date" in row else None,
        full_season=bool(row.get("full_season")),
        resolution={"sd": None}.get(row.get("resolution"), row.get("resolution")),
    )


def _stated_category(row: dict) -> int:
    """The row's category; where it states none, its top level (TV/SD for TV: an id a
    Sonarr search asks for, as Sonarr reads a name that states no quality)."""
    return row.get("category", 5030 if row["top_level"] == 5000 else row["top_level"])


def test_the_scoring_counts_a_right_reading_right_and_each_wrong_field_wrong():
    rows = [r for r in load()["names"] if name_count[r["name"]] == 1]
    right = score(
        rows,
        parse=lambda name: _as_stated(by_name[name]),
        decide=("stated", lambda name, parsed: _stated_category(by_name[name])),
    )
    for measure, counted in right.total.counted.items():
        assert right.total.right[measure] == counted > 0, measure

    row = next(r for r in rows if "episodes" in r and "season" in r and "category" in r)
    stated = _as_stated(row)
    assert all(judge(row, stated, row["category"]).values())
    assert judge(row, stated, row["category"] + 1)["category"] is False
    assert judge(row, stated, 8010)["top_level"] is False
    wrong_episode = replace(stated, episodes=(*stated.episodes, 999))
    assert judge(row, wrong_episode, row["category"])["episode"] is False
    assert judge(row, replace(stated, seasons=()), row["category"])["episode"] is False

    searched = next(r for r in rows if "tvsearch" in judge(r, _as_stated(r), 5040))
    stated = _as_stated(searched)
    assert judge(searched, stated, 5040)["tvsearch"] is True
    assert judge(searched, stated, 5050)["tvsearch"] is False  # no category Sonarr asks for
    assert judge(searched, replace(stated, title_key="other"), 5040)["tvsearch"] is False
    wrong = replace(stated, episodes=tuple(e + 1 for e in stated.episodes))
    assert judge(searched, wrong, 5040)["tvsearch"] is False

    fansub = next(r for r in rows if r.get("category_also"))
    assert judge(fansub, _as_stated(fansub), 5070)["category"] is True
    assert judge(fansub, _as_stated(fansub), 2040)["category"] is False


def test_resolution_is_compared_by_class():
    assert [resolution_class(r) for r in (None, 360, 576, 720, 960, 1080, 1440, 2160)] == [
        "sd", "sd", "sd", 720, 720, 1080, 1080, 2160,
    ]  # fmt: skip


# A name two fixtures state facts of has two rows; the oracle reads names stated once.
name_count = Counter(row["name"] for row in load()["names"])
by_name = {row["name"]: row for row in load()["names"]}


# ---------------------------------------------------------------- the goals
#
# Issue 25: on the corpus, top level >= 98 %, exact category >= 95 %, season and
# episode >= 97 %, year >= 97 % (kind conflicts apart). All four are met. The fifth,
# a Sonarr-style tvsearch finding the release >= 95 %, is not (the bench prints it).


@pytest.fixture(scope="module")
def corpus_score() -> name_corpus.Score:
    return score()


@pytest.mark.parametrize(
    "measure",
    [
        "top_level",
        "category",
        "episode",
        "year",
        "tvsearch",
    ],
)
def test_goal_on_the_corpus(corpus_score, measure):
    share = corpus_score.total.share(measure)
    misses = corpus_score.total.misses[measure][:10]
    assert share is not None and share >= GOALS[measure], (
        f"{measure}: {share:.1%} < {GOALS[measure]:.0%}; first misses: {misses}"
    )


# ------------------------------------------------- the extraction (bench/corpus/extract.py)


def _extract():
    path = Path(__file__).resolve().parents[2] / "bench" / "corpus" / "extract.py"
    spec = importlib.util.spec_from_file_location("corpus_extract", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


extract = _extract()


def test_the_csharp_reader_reads_attributes_escapes_arrays_and_skips_comments():
    source = r'''
        // [TestCase("commented out", 1)]
        /* [TestCase("in a block comment", 2)] */
        [TestCase("a \"b\" \u00e9\t", 1, new[] { 2, 3 }, Description = "why")]
        [TestCase(@"C:\dir ""q""", -4, new string[0], null, true, Quality.SDTV, 12.5)]
        public void should_read(string postTitle, int n, int[] list, params string[] rest)
        {
            var url = "http://example.com/*not a comment*/";
        }
        public void no_cases() { }
    '''
    methods = extract.test_methods(source)
    assert [(m.name, m.params) for m in methods] == [
        ("should_read", ["postTitle", "n", "list", "rest"]),
        ("no_cases", []),
    ]
    first, second = methods[0].cases
    assert first.args == ['a "b" \u00e9\t', 1, [2, 3]]
    assert first.named == {"Description": "why"}
    assert second.args == ['C:\\dir "q"', -4, [], None, True, "Quality.SDTV", 12.5]


def test_the_category_rule_as_documented():
    category = extract.category
    assert [category("tv", q) for q in ("WEBDL2160p", "Bluray1080p", "HDTV720p", "SDTV")] == [
        5045, 5040, 5040, 5030,
    ]  # fmt: skip
    assert category("anime", None) == category("anime", "SDTV") == 5070
    assert [
        category("movie", q)
        for q in ("Remux2160p", "BRDISK1080p", "Remux1080p", "Bluray1080p", "WEBDL720p", "CAM")
    ] == [2045, 2050, 2050, 2040, 2040, 2030]
    assert category("tv", None) is None and category("movie", None) is None


def test_every_row_category_follows_the_rule():
    for row in load()["names"]:
        assert row.get("category") == extract.category(row["kind"], row.get("quality")), row
        fansub = row["name"].lstrip().startswith(("[", "\u3010")) and row["kind"] == "tv"
        assert row.get("category_also") == ([5070] if fansub and "category" in row else None), row


def test_not_a_name_and_the_tv_marker():
    assert extract.not_a_name("  ") == "empty"
    assert extract.not_a_name("E:\\Downloads\\tv\\Show.S01E01.720p.HDTV\\a.avi")
    assert extract.not_a_name("Series.of.Sonarr.S03.720p.BluRay-CLUE\\REWARD") is None
    marked = [
        "Movie.Name.S01.1080p.WEB-DL.AAC2.0.AVC-TrollHD",
        "Movie.Name.2016.03.14.720p.WEB.x264-spamTV",
        "the.Movie Name.1x13.circles.ws.xvidvd-tns",
        "[FFF] Movie Name - 01 [BD][720p-AAC][0601BED4]",
    ]
    assert all(extract._tv_marker(name) for name in marked)
    plain = [
        "Movie Name (2020) [2160p x265 10bit S82 Joy]",
        "Movie.Title.2016.1080p.KORSUB.WEBRip.x264.AAC2.0-RADARR",
        "[Coalgirls]_Movie!!_01_(3840x2160_Blu-ray_FLAC)_[8370CB8F].mkv",
    ]
    assert not any(extract._tv_marker(name) for name in plain)
