"""An inspection's articles fetched from INN2 with BODY, inspected, and the report built.

Real files (a par2 index by par2cmdline, an nfo in several articles, a zip)
posted obfuscated to a real INN2; ``build_report`` fetches them through the
node's pool as ``--mode inspect`` does, and the report holds what they show.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

import pytest

from seed_node.articles import NewsServerArticles
from seed_node.inspecting import InspectLease, build_report
from seed_node.sources import NewsServerFailure
from tests.support.inn2 import InnServer
from tests.support.inspect_posts import (
    IMDB,
    REAL_NAME,
    PostedFile,
    lease_articles,
    obfuscated_release,
    yenc_articles,
)
from tests.support.net import free_port
from usenet.nntp import NewsServerConfig, NNTPPool

pytestmark = pytest.mark.inn

GROUP = "alt.binaries.inspect.fetch"


@pytest.fixture(scope="module")
def posted(inn_server: InnServer) -> dict[str, PostedFile]:
    inn_server.create_group(GROUP)
    files = obfuscated_release(GROUP, seed=7)
    articles = [article for posted in files.values() for article in posted.articles]
    result = inn_server.post_articles(None, articles)
    assert result.accepted == len(articles), result.refused
    return files


@pytest.fixture
def articles(inn_server: InnServer) -> Iterator[NewsServerArticles]:
    config = NewsServerConfig.from_url(f"{inn_server.url}/?connections=2&timeout=10")
    with NNTPPool(config) as pool:
        yield NewsServerArticles(pool, fetch_seconds=30)


def lease_of(named: list[dict]) -> InspectLease:
    data = {"id": 41, "epoch": 2, "release": 9001, "group": GROUP, "articles": named}
    return InspectLease.from_json(data)


def report_for(lease: InspectLease, articles: NewsServerArticles) -> dict:
    """The report, and under "fetched" the bytes of the bodies fetched for it."""
    fetched = []

    def fetch(message_id: str, cap: int) -> bytes:
        body = articles.body(lease, message_id, cap)
        fetched.append(len(body))
        return body

    return build_report(lease, fetch) | {"fetched": sum(fetched)}


def test_the_report_names_what_par2_nfo_and_archive_show(
    posted: dict[str, PostedFile], articles: NewsServerArticles
) -> None:
    assert len(posted["nfo"].articles) > 1  # the nfo is joined from several articles
    report = report_for(lease_of(lease_articles(posted)), articles)
    assert report["epoch"] == 2 and report["missing"] == []
    results = {result["role"]: result for result in report["results"]}
    assert sorted(results) == ["archive", "nfo", "par2"]
    video = f"{REAL_NAME}.mkv"
    assert [found["name"] for found in results["par2"]["files"]] == [video]
    assert results["par2"]["files"][0]["size"] == 60_000
    assert results["par2"]["yenc"]["name"] == posted["par2"].name
    assert [found["name"] for found in results["archive"]["files"]] == [video]
    assert results["archive"]["format"] == "zip"
    assert results["nfo"]["imdb_ids"] == [IMDB]
    assert REAL_NAME in results["nfo"]["release_names"]
    assert f"joined from {len(posted['nfo'].articles)} articles" in results["nfo"]["notes"]
    assert all(not result["errors"] for result in results.values())
    # Exactly the named articles' bodies were fetched, no more.
    named = sum(len(item["message_ids"]) for item in lease_articles(posted))
    assert report["fetched"] == sum(item["bytes"] for item in lease_articles(posted))
    assert named == 1 + len(posted["nfo"].articles) + 1


def test_articles_not_on_the_server_are_reported_missing(
    posted: dict[str, PostedFile], articles: NewsServerArticles
) -> None:
    named = {item["role"]: item for item in lease_articles(posted)}
    named["archive"]["message_ids"] = ["<expired@inspect.test>"]
    nfo_ids = named["nfo"]["message_ids"]
    nfo_ids[1] = "<gone@inspect.test>"  # the nfo's second article
    report = report_for(lease_of(list(named.values())), articles)
    assert [(m["role"], m["message_id"]) for m in report["missing"]] == [
        ("nfo", "<gone@inspect.test>"),
        ("archive", "<expired@inspect.test>"),
    ]
    assert all(m["error"].startswith("430") for m in report["missing"])
    results = {result["role"]: result for result in report["results"]}
    assert sorted(results) == ["nfo", "par2"]  # nothing of the archive was fetched
    # The nfo is what its first article holds; nothing after the gap is joined.
    assert results["nfo"]["imdb_ids"] == [IMDB]
    assert not any(note.startswith("joined") for note in results["nfo"]["notes"])


def test_a_body_over_the_leases_size_is_missing_not_read(
    posted: dict[str, PostedFile], articles: NewsServerArticles, inn_server: InnServer
) -> None:
    big = yenc_articles(
        random.Random(3).randbytes(200_000), "x.par2", GROUP, 200_000, random.Random(4)
    )
    assert inn_server.post_articles(None, big).accepted == 1
    named = [{"role": "par2", "message_ids": [big[0].message_id], "bytes": 1000, "name": "x.par2"}]
    report = report_for(lease_of(named), articles)
    assert report["results"] == []
    assert [m["message_id"] for m in report["missing"]] == [big[0].message_id]
    assert "longer than" in report["missing"][0]["error"]
    assert report["fetched"] == 0


def hostile_articles(case: str, rng: random.Random) -> list:
    """Articles whose bytes are hostile: yEnc-encoded garbage, or a lying yEnc header."""
    if case == "random data":
        return yenc_articles(rng.randbytes(30_000), "a.bin", GROUP, 30_000, rng)
    if case == "par2 packet headers claiming the rest":
        fake = b"PAR2\x00PKT" + (1 << 40).to_bytes(8, "little") + bytes(48)
        return yenc_articles(fake * 500, "a.par2", GROUP, 40_000, rng)
    if case == "rar headers in a loop":
        return yenc_articles(b"Rar!\x1a\x07\x00" + b"\x00" * 7 * 4000, "a.rar", GROUP, 40_000, rng)
    if case == "a yEnc header claiming a huge file":
        (article,) = yenc_articles(b"", "a.bin", GROUP, 10, rng)
        body = (
            b"=ybegin part=1 total=1 line=128 size=99999999999999999 name=a.par2\r\n"
            b"=ypart begin=1 end=99999999999999999\r\n" + b"A" * 5000 + b"\r\n=yend size=5\r\n"
        )
        return [replace(article, body=body)]
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    [
        "random data",
        "par2 packet headers claiming the rest",
        "rar headers in a loop",
        "a yEnc header claiming a huge file",
    ],
)
def test_hostile_bodies_end_in_the_results_errors_never_in_the_agent(
    case: str, articles: NewsServerArticles, inn_server: InnServer
) -> None:
    posted = hostile_articles(case, random.Random(case))
    assert inn_server.post_articles(None, posted).accepted == len(posted)
    ids = [article.message_id for article in posted]
    size = sum(len(article.body) for article in posted)
    named = [
        {"role": role, "message_ids": ids, "bytes": size, "name": "a.bin"}
        for role in ("par2", "nfo", "archive")
    ]
    report = report_for(lease_of(named), articles)
    assert report["missing"] == []
    results = {result["role"]: result for result in report["results"]}
    assert sorted(results) == ["archive", "nfo", "par2"]
    failed = {
        role: [error["part"] for error in result["errors"]] for role, result in results.items()
    }
    if case == "a yEnc header claiming a huge file":
        assert failed == {"par2": ["yenc"], "nfo": ["yenc"], "archive": ["yenc"]}
    else:  # the yEnc is sound; each role's parser says what is wrong (any bytes are some text)
        assert failed == {"par2": ["par2"], "nfo": [], "archive": ["archive"]}
        assert results["nfo"]["imdb_ids"] == []


def test_an_nfo_article_of_another_file_ends_the_join(
    articles: NewsServerArticles, inn_server: InnServer
) -> None:
    rng = random.Random(11)
    first = yenc_articles(b"tt0111161 " * 100, "a.nfo", GROUP, 500, rng)[:1]
    other = yenc_articles(b"tt0000001 " * 300, "b.nfo", GROUP, 500, rng)[2:3]  # begins at 1001
    assert inn_server.post_articles(None, first + other).accepted == 2
    ids = [first[0].message_id, other[0].message_id]
    named = [{"role": "nfo", "message_ids": ids, "bytes": 5000, "name": "a.nfo"}]
    (result,) = report_for(lease_of(named), articles)["results"]
    assert result["imdb_ids"] == ["tt0111161"]  # the first article's data, and only it
    assert [error["part"] for error in result["errors"]] == ["yenc"]
    assert "segment 2 begins at byte 1001, not 501" in result["errors"][0]["error"]


def test_an_unreachable_news_server_is_a_failure_not_a_missing_article() -> None:
    config = NewsServerConfig.from_url(f"nntp://127.0.0.1:{free_port()}/?timeout=2")
    with NNTPPool(config) as pool:
        articles = NewsServerArticles(pool, fetch_seconds=5)
        named = [{"role": "par2", "message_ids": ["<a@b>"], "bytes": 10, "name": "a.par2"}]
        with pytest.raises(NewsServerFailure, match="cannot connect"):
            report_for(lease_of(named), articles)
