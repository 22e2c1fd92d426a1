"""usenet.obfuscation on real names: the parser corpora's release names, and real digests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from usenet.obfuscation import MAX_LOOKED_AT, has_word, is_hash_like, is_obfuscated, name_stem

DATA = Path(__file__).parent / "data"


def _corpus(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("corpus", ["release_names.json", "release_names_holdout.json"])
def test_real_release_names_with_a_title_are_not_obfuscated(corpus: str) -> None:
    rows = _corpus(corpus)["names"]
    flagged = [row["name"] for row in rows if is_obfuscated(row["name"])]
    # Only names that carry no word at all ("1x04", "S07E23.mkv") are flagged;
    # every name whose title holds a word is left alone, CRC tags and
    # "-Obfuscated" group suffixes included.
    assert all(not has_word(name_stem(name)) for name in flagged), flagged
    titled = [row["name"] for row in rows if has_word(row.get("title") or "")]
    assert len(titled) > 600
    assert not [name for name in titled if is_obfuscated(name)]


def test_real_digests_from_the_corpus_sources_are_hash_like() -> None:
    # The commits the corpora were read at: real 40-digit SHA-1 digests.
    digests = {
        source[key]
        for corpus in ("release_names.json", "release_names_holdout.json")
        for source in _corpus(corpus)["sources"]
        for key in ("commit", "last_changed_in")
        if source.get(key)
    }
    assert len(digests) >= 5
    for digest in digests:
        assert is_hash_like(digest), digest
        assert is_obfuscated(f"{digest}.mkv")
        assert is_obfuscated(f"{digest[:24]}.part01.rar")


@pytest.mark.parametrize(
    "name",
    [
        "a8f7d6e5c4b3",  # issue 26's subject
        "b1c2d3.part01.rar",
        "q8w7e6.par2",
        "q8w7e6.vol03+04.par2",
        "xK9fQ2LmZp7TbWcR",  # base62, with words by chance: "Lm", "TbWcR"
        "k3j9xq2m8zt4.7z.001",
        "zqxvbnm.r00",  # letters without a vowel
        "1234567890",
        "",
    ],
)
def test_obfuscated_posted_names(name: str) -> None:
    assert is_obfuscated(name)


@pytest.mark.parametrize(
    "name",
    [
        "MovieName2019Remux",  # camel case: long runs
        "SeriesTitle2022.part01.rar",
        "Some.Movie.2019.1080p.BDRip.X264.AC3-EVO-Obfuscated",
        "[DHD] Series Title! - 08 (1280x720 10bit AAC) [008BF28B].mkv",
        "千と千尋の神隠し.2001.1080p",
        "HDTV-DIMENSION",
    ],
)
def test_named_releases(name: str) -> None:
    assert not is_obfuscated(name)


def test_stems_lose_archive_and_par2_chains_only() -> None:
    assert name_stem("x.part01.rar") == "x"
    assert name_stem("x.vol03+04.par2") == "x"
    assert name_stem("x.7z.001") == "x"
    assert name_stem("x.r17") == "x"
    assert name_stem("Some.Movie.2019") == "Some.Movie.2019"


def test_only_a_bounded_prefix_is_read() -> None:
    # A word past MAX_LOOKED_AT characters is not seen: the work stays bounded.
    assert is_obfuscated("7" * MAX_LOOKED_AT + "Title")
    assert not is_obfuscated("7" * (MAX_LOOKED_AT - 10) + "Title")
