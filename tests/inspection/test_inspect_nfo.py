"""inspect_nfo: an nfo's articles decoded, joined in order up to a bound, parsed once."""

from __future__ import annotations

from collections.abc import Iterator

from inspection import inspect_nfo, join_nfo

from .conftest import yenc_body

NFO = (
    b"Quiet.Harbor.2019.1080p.BluRay.x264-GRP\r\n"
    + b"-" * 3000
    + b"\r\nimdb.com/title/tt0111161/\r\n"
)


def segments(data: bytes, size: int) -> list[bytes]:
    return [
        yenc_body(data[at : at + size], "a.nfo", part=(at // size + 1, at + 1, len(data)))
        for at in range(0, len(data), size)
    ]


def test_segments_are_joined_before_parsing() -> None:
    # The IMDb id is only in the last of three articles, and split across none.
    result = inspect_nfo(segments(NFO, 1100))
    assert result.errors == []
    assert result.imdb_ids == ["tt0111161"]
    assert result.release_names == ["Quiet.Harbor.2019.1080p.BluRay.x264-GRP"]
    assert "joined from 3 articles" in result.notes
    assert result.yenc is not None and result.yenc["part"] == 1


def test_an_id_split_between_two_articles_is_found() -> None:
    cut = NFO.index(b"tt0111161") + 4
    result = inspect_nfo(segments(NFO, cut))
    assert result.imdb_ids == ["tt0111161"]


def test_no_more_is_fetched_once_the_bound_is_joined() -> None:
    asked: list[int] = []

    def lazily() -> Iterator[bytes]:
        for number, body in enumerate(segments(NFO, 1000), start=1):
            asked.append(number)
            yield body

    result = inspect_nfo(lazily(), max_bytes=1500)
    assert asked == [1, 2]  # the bound was reached inside the second article
    assert result.imdb_ids == []  # the id lies past the bound


def test_a_plain_text_nfo_is_read_as_it_is() -> None:
    result = inspect_nfo([NFO])
    assert (result.format, result.errors, result.imdb_ids) == ("nfo", [], ["tt0111161"])


def test_a_broken_article_ends_the_join_and_says_so() -> None:
    first, second, third = segments(NFO, 1100)
    broken = second.replace(b"pcrc32=", b"pcrc32=0")  # a CRC that cannot match
    result = inspect_nfo([first, broken, third])
    assert [error["part"] for error in result.errors] == ["yenc"]
    assert result.errors[0]["error"].startswith("segment 2: ")
    assert result.release_names == ["Quiet.Harbor.2019.1080p.BluRay.x264-GRP"]
    assert result.imdb_ids == []  # in the third article, after the break


def test_nothing_to_join_gives_an_empty_result() -> None:
    result = inspect_nfo([])
    assert (result.format, result.errors, result.notes) == (None, [], [])


def test_joining_leaves_the_parsing_for_later() -> None:
    # The node joins on the thread that fetches and parses on the reporter's.
    joined = join_nfo(segments(NFO, 1100))
    assert (joined.data, joined.segments) == (NFO, 3)
    assert joined.result.imdb_ids == [] and joined.result.release_names == []
    result = joined.parse()
    assert result.imdb_ids == ["tt0111161"]
    assert result.release_names == ["Quiet.Harbor.2019.1080p.BluRay.x264-GRP"]
    assert "joined from 3 articles" in result.notes


def test_an_nfo_is_parsed_once_however_often_asked() -> None:
    # Asked again (a report built again), the same result: no id, name or note twice.
    joined = join_nfo(segments(NFO, 1100))
    first = joined.parse().to_json()
    assert joined.parse().to_json() == first
    assert first["notes"].count("joined from 3 articles") == 1
