"""The INN2 harness serves what a seed node will read: counts, overview, holes, DEFLATE.

One module-scoped load posts a few thousand backdated yEnc articles over about 30 days
into three groups and cancels a few; the tests then read the server back with the
harness's raw NNTP client and compare with the generator's manifest.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from tests.support import inn2
from tests.support.inn2 import InnServer, NntpClient, PostResult
from tests.support.usenet import Article, Manifest, make_binary_posts

pytestmark = pytest.mark.inn

GROUPS = ("alt.binaries.harness.a", "alt.binaries.harness.b", "alt.binaries.harness.c")
DAYS = 30
CANCELLED_PER_GROUP = 3


@dataclass
class Load:
    articles: list[Article]
    manifest: Manifest
    result: PostResult
    numbers: dict[str, dict[str, int]]  # group -> message-id -> article number
    cancelled: dict[str, list[int]]  # group -> cancelled article numbers
    now: datetime


@pytest.fixture(scope="module")
def load(inn_server: InnServer) -> Load:
    now = datetime.now(UTC)
    articles, manifest = make_binary_posts(
        GROUPS, seed=2024, releases=90, days=DAYS, now=now, max_segments=15
    )
    for group in GROUPS:
        inn_server.create_group(group)
    result = inn_server.post_articles(None, articles)
    numbers = {group: inn_server.article_numbers(group) for group in GROUPS}
    cancelled: dict[str, list[int]] = {}
    for group in GROUPS:
        by_number = {number: mid for mid, number in numbers[group].items()}
        # First, one in the middle, last: holes at both water marks and inside.
        picks = sorted(by_number)
        victims = [picks[0], picks[len(picks) // 2], picks[-1]][:CANCELLED_PER_GROUP]
        for number in victims:
            inn_server.cancel(by_number[number])
        cancelled[group] = victims
    return Load(articles, manifest, result, numbers, cancelled, now)


def posted_per_group(load: Load) -> Counter[str]:
    return Counter(article.newsgroups[0] for article in load.articles)


def test_thousands_of_backdated_articles_post_in_seconds(load: Load, record_property) -> None:
    assert len(load.articles) >= 2000
    assert load.result.refused == {}
    assert load.result.accepted == len(load.articles)
    # Recorded, not asserted: speed belongs to benchmarks. Shown with `pytest -s`.
    record_property("post_articles", len(load.articles))
    record_property("post_seconds", round(load.result.seconds, 3))
    print(
        f"\nposted {load.result.accepted} articles in {load.result.seconds:.2f}s "
        f"({load.result.rate:.0f}/s)"
    )


def test_group_reports_count_and_water_marks(load: Load, inn_reader: NntpClient) -> None:
    for group, posted in posted_per_group(load).items():
        info = inn_reader.group(group)
        # INN's GROUP count comes from the active file's marks: cancels leave it alone
        # until expireover runs, as RFC 3977 allows ("estimated" count).
        assert (info.count, info.first, info.last) == (posted, 1, posted)


def test_over_returns_backdated_dates_in_number_order(load: Load, inn_reader: NntpClient) -> None:
    group = GROUPS[0]
    info = inn_reader.group(group)
    lines = inn_reader.over(info.first, info.last)
    dates = [parsedate_to_datetime(line.date) for line in lines]
    assert dates == sorted(dates)  # posted in date order, so numbers follow dates
    assert dates[0] < load.now - timedelta(days=DAYS - 3)
    assert dates[-1] < load.now
    assert {line.message_id for line in lines} <= {a.message_id for a in load.articles}
    assert all(line.bytes > 0 and f"{group}:{line.number}" in line.extra[0] for line in lines)


def test_cancelled_articles_are_holes(load: Load, inn_reader: NntpClient) -> None:
    for group, holes in load.cancelled.items():
        info = inn_reader.group(group)
        served = {line.number for line in inn_reader.over(info.first, info.last)}
        assert served.isdisjoint(holes)
        assert served | set(holes) == set(range(info.first, info.last + 1))
        for number in holes:
            assert inn_reader.stat(number)[0] == 423


def test_overview_matches_the_manifest(load: Load, inn_reader: NntpClient) -> None:
    cancelled_ids = {
        mid
        for group, holes in load.cancelled.items()
        for mid, number in load.numbers[group].items()
        if number in holes
    }
    served = {}
    for group in GROUPS:
        info = inn_reader.group(group)
        served.update({line.message_id: line for line in inn_reader.over(info.first, info.last)})
    incomplete = [f for f in load.manifest.files.values() if not f.complete]
    assert incomplete, "the generator should leave some files incomplete"
    for posted in load.manifest.files.values():
        for segment in posted.segments:
            if segment.message_id in cancelled_ids:
                continue
            line = served[segment.message_id]
            assert f'"{posted.filename}" yEnc ({segment.part}/{posted.total_parts})' in line.subject
            assert line.from_ == posted.poster
            assert parsedate_to_datetime(line.date) == segment.date
    posted_ids = set(load.manifest.message_ids)
    assert set(served) == posted_ids - cancelled_ids


def test_compress_deflate_is_offered_and_over_works_through_it(
    load: Load, inn_server: InnServer
) -> None:
    group = GROUPS[1]
    with inn_server.reader() as plain:
        assert "COMPRESS DEFLATE" in plain.capabilities()
        info = plain.group(group)
        expected = plain.over(info.first, info.last)
    with inn_server.reader() as client:
        assert client.compress_deflate()[0] == 206
        assert client.compressed
        # Once compressed, nnrpd stops offering COMPRESS (RFC 8054 section 2.2.2).
        assert "COMPRESS DEFLATE" not in client.capabilities()
        assert client.group(group) == info
        assert client.over(info.first, info.last) == expected


def test_reposting_a_known_message_id_is_refused(load: Load, inn_server: InnServer) -> None:
    again = inn_server.post_articles(None, load.articles[:5])
    assert again.accepted == 0
    assert set(again.refused) == {a.message_id for a in load.articles[:5]}


def test_generator_is_deterministic_for_a_seed() -> None:
    now = datetime(2024, 1, 31, tzinfo=UTC)
    first, first_manifest = make_binary_posts(GROUPS, seed=5, releases=5, now=now)
    second, second_manifest = make_binary_posts(GROUPS, seed=5, releases=5, now=now)
    assert [a.to_wire() for a in first] == [a.to_wire() for a in second]
    assert first_manifest == second_manifest
    names = list(first_manifest.files)
    assert any(name.endswith(".part01.rar") for name in names)
    assert any(".vol00+01.par2" in name for name in names)


def test_a_missing_install_names_the_install_script(monkeypatch) -> None:
    monkeypatch.setattr(inn2, "INN_BIN", Path("/nonexistent/news/bin"))
    with pytest.raises(inn2.InnNotInstalled, match=r"\.ci/install-inn2"):
        InnServer()


NOT_ROOT_PROBE = """
import os, sys
from tests.support.inn2 import InnServer, NntpClient
with InnServer() as server:
    server.create_group("alt.test.not.root")
    with NntpClient(server.host, server.port) as reader:
        reader.mode_reader()
        print(reader.group("alt.test.not.root").name, os.geteuid())
"""


def test_the_harness_runs_inn_for_a_user_that_is_neither_root_nor_news(tmp_path: Path) -> None:
    """`make test` as an ordinary user: INN runs as that user (runasuser in its inn.conf).

    As root, the probe runs as `nobody` with the system's Python (root's interpreter
    may sit in an unreadable home); as anyone else, in this process.
    """
    import os
    import shutil
    import subprocess

    inn2.check_installed()
    if os.geteuid() != 0:
        with InnServer() as server:
            server.create_group("alt.test.not.root")
            with NntpClient(server.host, server.port) as reader:
                reader.mode_reader()
                assert reader.group("alt.test.not.root").name == "alt.test.not.root"
        return
    runuser, python = shutil.which("runuser"), shutil.which("python3", path="/usr/bin")
    if runuser is None or python is None:
        pytest.skip("runuser or /usr/bin/python3 is missing: cannot switch to nobody")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [runuser, "-u", "nobody", "--", python, "-c", NOT_ROOT_PROBE],
        cwd=root, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1",
             "HOME": str(tmp_path), "TMPDIR": "/tmp"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    group, uid = done.stdout.split()
    assert group == "alt.test.not.root" and int(uid) not in (0, inn2.pwd.getpwnam("news").pw_uid)
