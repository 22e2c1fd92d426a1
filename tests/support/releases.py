"""Three releases stored as fragments (a TV episode cross-posted, a movie with a rar
missing, an album): the `releases` fixture the release API, admin and search tests share."""

from __future__ import annotations

import pytest

from catalog.services import store_files
from tests.support.factories import GroupFactory
from tests.support.reports import release_files

TV = "Some.Show.S01E02.1080p.WEB.h264-GRP"
MOVIE = "A.Movie.2019.2160p.UHD.BluRay.x265-GRP"
ALBUM = "Artist-Album-WEB-2024-FLAC"


def store_fragments(group, files):
    store_files(group.id, None, [], files)


@pytest.fixture
def releases():
    tv, misc = GroupFactory(name="alt.binaries.teevee"), GroupFactory(name="alt.binaries.misc")
    store_fragments(tv, release_files(TV, date=1_700_000_000))
    store_fragments(misc, release_files(TV, date=1_700_000_000))  # cross-posted
    movie = release_files(MOVIE, date=1_700_100_000, poster="m <m@m>")
    store_fragments(misc, [movie[0], *movie[2:]])  # one rar missing
    store_fragments(misc, release_files(ALBUM, date=1_700_200_000, poster="a <a@a>"))
    return tv, misc
