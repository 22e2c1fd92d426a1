"""plan_seed, plan_tail and add_groups: typed options, progress, a summary; errors change nothing."""

from __future__ import annotations

import os
import signal
import threading
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from indexer.models import Group
from indexer.newsserver import close_news_pool
from seeding.models import SeedRange
from tests.support.factories import GroupFactory

pytestmark = pytest.mark.django_db


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_plan_seed_shows_progress_and_a_summary_table(news_group):
    news_group("alt.binaries.c1", 1, 10_000, live_from=9_001)
    news_group("alt.binaries.c2", 1, 2_000)
    out, err = run("plan_seed", "alt.binaries.c1", "alt.binaries.c2", "--size", "1000")
    assert "2/2 groups alt.binaries.c2" in err  # not a terminal: plain lines
    assert "from" in out and "ranges" in out and "gaps" in out and "articles" in out
    assert "9,000" in out
    assert "Planned 11 ranges, 11,000 articles" in out
    assert SeedRange.objects.count() == 11


def test_plan_seed_with_an_unknown_group_changes_nothing(news_group):
    news_group("alt.binaries.real", 1, 1_000)
    with pytest.raises(CommandError, match=r"alt\.binaries\.typo"):
        run("plan_seed", "alt.binaries.real", "alt.binaries.typo")
    assert SeedRange.objects.count() == 0


def test_plan_seed_dry_run_and_all_active(news_group):
    news_group("alt.binaries.d1", 1, 5_000)
    news_group("alt.binaries.d2", 1, 5_000, active=False)
    out, _ = run("plan_seed", "--all-active", "--dry-run", "--size", "5000", "--days", "400")
    assert "Would plan 1 ranges" in out
    assert "alt.binaries.d2" not in out
    assert SeedRange.objects.count() == 0


def test_plan_seed_without_a_news_server_is_a_clear_error(news_group):
    news_group("alt.binaries.nos", 1, 5_000)
    with override_settings(NEWS_SERVER_URL=""):
        close_news_pool()
        with pytest.raises(CommandError, match="NEWS_SERVER_URL"):
            run("plan_seed", "alt.binaries.nos")


def test_plan_tail_once(news_group):
    news_group("alt.binaries.t1", 1, 3_000, live_from=2_001)
    out, _ = run("plan_tail")
    assert SeedRange.objects.get().priority == 10
    assert "Planned 1 ranges, 1,000 articles" in out


@pytest.mark.slow
def test_plan_tail_loops_until_sigterm(news, news_group):
    group = news_group("alt.binaries.t2", 1, 3_000, live_from=2_001)

    def grow_then_stop():
        news.groups[group.name].last = 4_000
        threading.Timer(0.6, os.kill, (os.getpid(), signal.SIGTERM)).start()

    threading.Timer(0.3, grow_then_stop).start()
    out, _ = run("plan_tail", "--every", "0.1")
    assert "Stopped after" in out
    assert list(SeedRange.objects.order_by("id").values_list("start_id", "end_id")) == [
        (2_001, 3_000),
        (3_001, 4_000),
    ]


def test_add_groups_adds_what_the_server_lists(news):
    for name in ("alt.binaries.x1", "alt.binaries.x2", "alt.test"):
        news.add_group(name)
    GroupFactory(name="alt.binaries.x1")
    out, _ = run("add_groups", "alt.binaries.*", "--dry-run")
    assert "would add 1" in out and Group.objects.count() == 1
    out, _ = run("add_groups", "alt.binaries.*")
    assert "added 1, 1 already known" in out
    assert set(Group.objects.values_list("name", flat=True)) == {
        "alt.binaries.x1",
        "alt.binaries.x2",
    }


@pytest.mark.slow
def test_add_groups_takes_more_groups_than_one_statement_can_name(news):
    # Over 65,535: PostgreSQL's limit of parameters in one statement.
    for number in range(70_000):
        news.add_group(f"alt.binaries.many.{number:05d}")
    GroupFactory(name="alt.binaries.many.00007")
    out, _ = run("add_groups", "alt.binaries.many.*")
    assert "added 69,999, 1 already known" in out
    assert Group.objects.filter(name__startswith="alt.binaries.many.").count() == 70_000


def test_add_groups_refuses_listed_names_rfc_3977_does_not_allow(news):
    news.add_group("alt.binaries.fine")
    news.add_group("alt.binaries.bad,comma")
    out, _ = run("add_groups", "alt.binaries.*")
    assert "added 1" in out
    assert "Refused 1 listed name(s)" in out and "alt.binaries.bad,comma" in out
    assert list(Group.objects.values_list("name", flat=True)) == ["alt.binaries.fine"]


def test_planning_refuses_a_group_name_that_would_reach_the_news_server_raw():
    from core.errors import Invalid
    from seeding.planning import resolve_groups

    with pytest.raises(Invalid, match="control character"):
        resolve_groups(["alt.binaries.x\r\nQUIT"])
