"""Release categories by the default rules: real-shaped scene names and their newznab ids."""

from __future__ import annotations

import pytest

from usenet.categories import CATEGORIES, DEFAULT_CATEGORY_RULES, OTHER, CategoryRules

RULES = CategoryRules()

NAMES = [
    # TV
    (
        "The.Last.of.Us.S01E03.2160p.HMAX.WEB-DL.DDP5.1.Atmos.DV.HEVC-CMRG",
        "alt.binaries.misc",
        5045,
    ),
    (
        "Severance.S02E01.Hello.Ms.Cobel.2160p.ATVP.WEB-DL.DDP5.1.HDR.H.265-NTb",
        "alt.binaries.misc",
        5045,
    ),
    ("House.of.the.Dragon.S02E04.1080p.WEB.H264-SuccessfulCrab", "alt.binaries.misc", 5040),
    ("Slow.Horses.S04E01.720p.ATVP.WEB-DL.DDP5.1.H.264-NTb", "alt.binaries.misc", 5040),
    ("The.Daily.Show.2024.03.12.1080p.WEB.h264-EDITH", "alt.binaries.misc", 5040),
    ("Taskmaster.S17.1080p.WEBRip.x264-GRP", "alt.binaries.misc", 5040),
    ("Doctor.Who.2005.S13E02.HDTV.x264-SORNY", "alt.binaries.misc", 5030),
    ("Seinfeld.9x21.The.Clip.Show.DVDRip.XviD-FoV", "alt.binaries.misc", 5030),
    ("Top.Gear.S22E01.480p.x264-mSD", "alt.binaries.misc", 5030),
    ("Friends S05E08 The One With All The Thanksgivings DVDRip", "alt.binaries.misc", 5030),
    # Movies
    ("Dune.Part.Two.2024.2160p.UHD.BluRay.REMUX.HDR.HEVC.Atmos-FGT", "alt.binaries.misc", 2045),
    ("Oppenheimer.2023.4K.HDR.DV.2160p.WEBDL.Ti-Tsar", "alt.binaries.misc", 2045),
    ("Inception.2010.1080p.BluRay.x264-SPARKS", "alt.binaries.misc", 2040),
    ("The.Matrix.1999.720p.BluRay.DTS.x264-ESiR", "alt.binaries.misc", 2040),
    ("Alien.1979.Directors.Cut.1080i.HDTV.MPEG2-GRP", "alt.binaries.misc", 2040),
    ("Heat.1995.DVDRip.XviD-DiAMOND", "alt.binaries.misc", 2030),
    ("Blade.Runner.1982.Final.Cut.576p.BDRip.x264-NoGrp", "alt.binaries.misc", 2030),
    ("Amelie.2001.PAL.DVDR-NOiR", "alt.binaries.misc", 2030),
    # Audio
    ("Pink_Floyd-The_Dark_Side_Of_The_Moon-Remastered-CD-FLAC-2011-WRE", "alt.binaries.misc", 3040),
    (
        "Taylor_Swift-The_Tortured_Poets_Department-24BIT-WEB-FLAC-2024-ENRiCH",
        "alt.binaries.misc",
        3040,
    ),
    ("Daft_Punk-Random_Access_Memories-(CDDA)-2013-GRP", "alt.binaries.misc", 3040),
    ("Metallica-72_Seasons-WEB-2023-MP3-320kbps-FTD", "alt.binaries.misc", 3010),
    ("VA-Ministry_Of_Sound_Anthems-3CD-2019-MP3-C4", "alt.binaries.misc", 3010),
    ("Stephen.King.-.Holly.2023.Audiobook.M4B", "alt.binaries.misc", 3030),
    # Books
    (
        "Brandon.Sanderson.-.Wind.and.Truth.2024.RETAIL.EPUB.eBook-BitBook",
        "alt.binaries.misc",
        7020,
    ),
    ("The_Economist_-_March_16_2024.pdf", "alt.binaries.misc", 7020),
    ("Andy Weir - Project Hail Mary (retail) (mobi)", "alt.binaries.misc", 7020),
    ("Saga.Vol.11.2024.Digital.Comic.cbr", "alt.binaries.misc", 7030),
    ("Batman.-.The.Long.Halloween.001.cbz", "alt.binaries.misc", 7030),
    # PC
    ("Baldurs.Gate.3-CODEX", "alt.binaries.misc", 4050),
    ("Cyberpunk.2077.Phantom.Liberty-RUNE", "alt.binaries.misc", 4050),
    ("Adobe.Photoshop.2024.v25.0.x64.Multilingual-GRP", "alt.binaries.misc", 4000),
    ("ubuntu-24.04-desktop-amd64.iso", "alt.binaries.misc", 4000),
    ("Microsoft.Office.Pro.Plus.2021.Win64-GRP", "alt.binaries.misc", 4000),
    ("VLC.Player.3.0.20.Setup.exe", "alt.binaries.misc", 4000),
    # Only the group says it
    ("c0a1f2e7d9b84e31", "alt.binaries.teevee", 5000),
    ("some_movie_upload", "alt.binaries.movies.divx", 2000),
    ("concert_recording_2019", "alt.binaries.sounds.lossless", 3000),
    ("a_pile_of_books", "alt.binaries.e-books", 7020),
    ("tool_collection", "alt.binaries.warez", 4000),
    # Nothing says it
    ("4f3c2a1b0e9d8c7b6a5f", "alt.binaries.misc", OTHER),
    ("family_photos_2019", "alt.binaries.pictures", OTHER),
]


@pytest.mark.parametrize(("name", "group", "category"), NAMES, ids=[n for n, _, _ in NAMES])
def test_a_real_shaped_name_gets_its_newznab_category(name, group, category):
    assert RULES.categorize(name, [group]) == category


def test_every_category_the_rules_give_is_a_standard_newznab_id():
    assert {rule["category"] for rule in DEFAULT_CATEGORY_RULES} <= set(CATEGORIES)
    assert all(1000 <= cat < 9000 for cat in CATEGORIES)


@pytest.mark.parametrize(
    "pattern",
    [r"(?=x)y", r"(?!x)y", r"(?<=a)b", r"(?<!a)b", r"(a)\1", r"(?P<x>a)(?P=x)", r"a++"],
)
def test_patterns_outside_re2_syntax_are_refused(pattern):
    with pytest.raises(ValueError, match="RE2"):
        CategoryRules([{"category": 2000, "name": [pattern]}])


def test_the_default_patterns_are_re2_syntax():
    # What the RE2 switch needs: none of the constructs RE2 lacks.
    CategoryRules(list(DEFAULT_CATEGORY_RULES))


@pytest.mark.parametrize(
    "rule",
    [
        {"category": 1234, "name": ["x"]},
        {"category": 2000},
        {"category": 2000, "name": ["("]},
        {"category": 2000, "name": ["x"], "extra": 1},
        "not an object",
    ],
)
def test_bad_rules_are_refused_with_a_reason(rule):
    with pytest.raises(ValueError):
        CategoryRules([rule])
