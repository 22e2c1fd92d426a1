"""nfo text: charset, IMDb and TVDB ids, a release name; bounded, no backtracking."""

from __future__ import annotations

import codecs

import pytest

from inspection import nfo

from .conftest import steps_of

ART = "  ╔═══════════════╗\n  ║  ░▒▓ GROUP ▓▒░ ║\n  ╚═══════════════╝\n"
TEXT = (
    ART
    + "  Release: The.Shawshank.Redemption.1994.1080p.BluRay.x264-GROUP\n"
    + "  IMDb....: https://www.imdb.com/title/tt0111161/\n"
    + "  TVDB....: http://thetvdb.com/?tab=series&id=81189\n"
)


def test_cp437_art_is_read_as_cp437_with_the_ids_and_name() -> None:
    facts = nfo.parse(TEXT.encode("cp437"))
    assert facts.encoding == "cp437"
    assert facts.imdb_ids == ("tt0111161",)
    assert facts.tvdb_ids == ("81189",)
    assert facts.release_names == ("The.Shawshank.Redemption.1994.1080p.BluRay.x264-GROUP",)


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8"),
        (TEXT.encode("utf-16"), "utf-16"),
        (b"plain ascii tt0111161", "utf-8"),
    ],
)
def test_utf8_and_utf16_are_recognised(data: bytes, encoding: str) -> None:
    facts = nfo.parse(data)
    assert facts.encoding == encoding
    assert facts.imdb_ids == ("tt0111161",)


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("imdb.com/title/tt0111161 and tt12345678.", ("tt0111161", "tt12345678")),
        ("IMDB: TT0111161", ("tt0111161",)),
        ("tt123456 is short, tt123456789 long, att1234567 in a word", ()),
        ("tt0111161 twice: http://imdb.com/title/tt0111161/", ("tt0111161",)),
    ],
)
def test_imdb_ids_are_tt_and_7_or_8_digits(text: str, ids: tuple[str, ...]) -> None:
    assert nfo.parse(text.encode()).imdb_ids == ids


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("https://www.thetvdb.com/series/121361", ("121361",)),
        ("http://thetvdb.com/index.php?tab=series&id=79168&lid=7", ("79168",)),
        ("thetvdb.com/?tab=series&amp;id=73255", ("73255",)),
        ("http://thetvdb.com/api/GetSeries.php?seriesid=80379", ("80379",)),
        ("https://anon.to/?https%3A%2F%2Fthetvdb.com%2F%3Ftab%3Dseries%26id%3D81189", ("81189",)),
        ("http://www.dereferer.org/?http://thetvdb.com/?tab=series&id=75760", ("75760",)),
        ("https://thetvdb.com/series/breaking-bad", ()),
        ("thetvdb.com 12345 is not a link id", ()),
    ],
)
def test_tvdb_ids_come_from_thetvdb_links(text: str, ids: tuple[str, ...]) -> None:
    assert nfo.parse(text.encode()).tvdb_ids == ids


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[Some.Show.S01E02.720p.HDTV.x264-LOL]", ("Some.Show.S01E02.720p.HDTV.x264-LOL",)),
        ("see www.example.com or http://a.b.c/x-y file.name.nfo", ()),
        ("Movie.Title-GRP has too few words", ()),
    ],
)
def test_a_release_name_is_a_dotted_token_ending_in_a_group(
    text: str, names: tuple[str, ...]
) -> None:
    assert nfo.parse(text.encode()).release_names == names


def test_only_the_first_64_kib_are_read() -> None:
    data = b" " * nfo.MAX_NFO + b"tt0111161"
    facts = nfo.parse(data)
    assert facts.truncated
    assert facts.imdb_ids == ()


def test_ids_are_capped() -> None:
    text = " ".join(f"tt{n:07d}" for n in range(1000))
    assert len(nfo.parse(text.encode()).imdb_ids) == nfo.MAX_IDS


@pytest.mark.parametrize(
    "unit", ["t", "tt", "tt0", "thetvdb.com", "thetvdb.com/series/", "a.", "%", "tt1234567a"]
)
def test_repeated_fragments_cost_linear_work(unit: str) -> None:
    small, large = (unit * (size // len(unit)) for size in (4_000, 60_000))
    ratio = steps_of(nfo.parse, large.encode()) / max(1, steps_of(nfo.parse, small.encode()))
    assert ratio <= 16  # 15x the input; a quadratic scan would be 225x
