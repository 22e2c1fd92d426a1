"""The obfuscation predicate (usenet/obfuscation.py): which names carry no word."""

from __future__ import annotations

import pytest

from usenet.obfuscation import is_obfuscated, stem_of


@pytest.mark.parametrize(
    "name",
    [
        "a8f7d6e5c4b3",
        "b1c2d3.part01.rar",
        "q8w7e6.par2",
        "q8w7e6.vol03+04.par2",
        "x9y8z7.7z.001",
        "x9y8z7.r00",
        "zz.nfo",
        "123456789",
        "3f2a1b4c-9d8e-4f70-a1b2-c3d4e5f60718",
        "deadbeefcafebabe0123",
        "Kq3ZpL0aXv9rTm2WsY7nBc4D",
        "",
        "  ",
        "___.rar",
    ],
)
def test_names_without_a_word_are_obfuscated(name):
    assert is_obfuscated(name)


@pytest.mark.parametrize(
    "name",
    [
        "Show.Name.S01E02.720p.HDTV.x264-GRP",
        "Avatar2009",
        "The.Movie.2020.1080p.BluRay.x264-GROUP.part01.rar",
        "Some Album - 01 - Track.mp3",
        "Up.2009.1080p.BluRay.x264-GRP",
        "Nikita.S02E03.mkv",
        "Тест.Фильм.2020",
    ],
)
def test_names_with_a_word_are_not(name):
    assert not is_obfuscated(name)


def test_the_stem_drops_volume_suffixes_and_one_extension():
    assert stem_of("Name.part01.rar") == "Name"
    assert stem_of("Name.7z.001") == "Name"
    assert stem_of("Name.vol03+04.par2") == "Name"
    assert stem_of("Name.r00") == "Name"
    assert stem_of("Name.S01E01.mkv") == "Name.S01E01"


def test_a_long_name_is_read_only_up_to_its_bound():
    # A word past MAX_NAME characters is not read: the cost stays bounded.
    assert is_obfuscated("a1b2c3" * 200 + ".Real.Words")
    assert not is_obfuscated("Real.Words." + "a1b2c3" * 200)
