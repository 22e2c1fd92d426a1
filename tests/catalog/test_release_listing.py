"""A release counted once across cross-posts, listed when complete (in the batch that
completes it) or once settled (the upkeep), and counted again by
`manage.py recount_releases`."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction

from catalog import services
from catalog.models import CatalogFile, Release, ReleaseSettling
from catalog.release_counts import recount_releases, settle_releases
from catalog.services import delete_files, store_files
from tests.support.factories import GroupFactory
from tests.support.reports import STEM, release_files, report
from tests.support.threads import run_threads

pytestmark = pytest.mark.django_db


def store(group, *reports):
    return store_files(group.id, None, [], list(reports))


def articles_bytes(files):
    """The bytes of a set of reported files' articles, each article once."""
    return sum(size for f in files for (_part, _article, _mid, size) in f.segments)


def sql(statement, params=()):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def backdate_queue(minutes):
    sql(
        "UPDATE catalog_release_settling SET touched_at = now() - make_interval(mins => %s)",
        [minutes],
    )


def big_release(stem=STEM, *, missing=0, count=3):
    """`count` files of 100 segments each, the last one missing `missing` of them."""
    files = []
    for i in range(1, count + 1):
        parts = range(1, 101 - (missing if i == count else 0))
        files.append(report(f"{stem}.part{i:02d}.rar", parts, 100, index=i, count=count))
    return files


# --- counted once -----------------------------------------------------------------


def test_a_release_posted_to_two_groups_reports_its_articles_bytes_once():
    files = release_files()
    store(GroupFactory(name="alt.binaries.a"), *files)
    store(GroupFactory(name="alt.binaries.b"), *files)
    release = Release.objects.get()
    assert CatalogFile.objects.count() == 10  # a row per group, as before
    assert release.size == articles_bytes(files)
    assert (release.files_seen, release.segments_present, release.segments_expected) == (5, 10, 10)
    assert release.groups == ["alt.binaries.a", "alt.binaries.b"]


def test_copies_of_different_files_in_two_groups_add_up_to_the_distinct_files():
    files = release_files()
    store(GroupFactory(), *files[:3])
    store(GroupFactory(), *files[2:])  # the third file in both
    release = Release.objects.get()
    assert (release.files_seen, release.size) == (5, articles_bytes(files))


def test_a_copy_counts_what_it_has_beyond_the_other_and_a_deleted_copy_leaves_the_other():
    first, second = GroupFactory(), GroupFactory()
    files = release_files()
    store(first, *[replace(f, segments=f.segments[:1]) for f in files])
    store(second, *files)  # the fuller copy
    release = Release.objects.get()
    assert (release.segments_present, release.size) == (10, articles_bytes(files))
    store(first, *files)  # the first copy catches up: nothing new to the release
    assert Release.objects.get().size == articles_bytes(files)
    delete_files(CatalogFile.objects.filter(group=second).values_list("id", flat=True))
    release = Release.objects.get()
    assert (release.files_seen, release.segments_present, release.size) == (
        5,
        10,
        articles_bytes(files),
    )
    assert release.groups == [first.name]


# --- listed by completion ---------------------------------------------------------------


def test_the_batch_that_completes_a_release_lists_it_in_its_own_transaction():
    group = GroupFactory()
    files = release_files()
    store(group, *files[:4])
    release = Release.objects.get()
    assert not release.listed
    assert ReleaseSettling.objects.filter(release_id=release.id).exists()
    with transaction.atomic():
        store(group, files[4])
        assert Release.objects.get().listed  # before the batch commits
        transaction.set_rollback(True)
    assert not Release.objects.get().listed  # rolled back with the batch
    store(group, files[4])
    assert Release.objects.get().listed


def test_a_release_with_no_file_counter_is_not_listed_on_its_first_complete_file():
    group = GroupFactory()
    first = release_files()[0]
    store(group, replace(first, segments=first.segments[:1]))
    sql("UPDATE catalog_release SET files_expected = NULL")  # a release without a counter
    store(group, first)  # its first file, complete
    release = Release.objects.get()
    assert (release.files_seen, release.segments_present, release.segments_expected) == (1, 2, 2)
    assert not release.listed
    backdate_queue(121)
    assert settle_releases() == 1  # settling lists it
    assert Release.objects.get().listed


# --- listed by settling ------------------------------------------------------------------


def test_a_quiet_release_above_the_floor_is_listed_by_the_upkeep(settings):
    settings.RELEASE_SETTLE_MINUTES = 120
    settings.RELEASE_MIN_COMPLETION = 98
    group = GroupFactory()
    store(group, *big_release("Near.Complete.S01E01.720p-GRP", missing=2))  # 298/300
    store(group, *big_release("Half.Done.S01E01.720p-GRP", missing=60))  # 240/300
    assert not Release.objects.filter(listed=True).exists()
    assert settle_releases() == 0  # not quiet yet
    backdate_queue(119)
    assert settle_releases() == 0
    backdate_queue(121)
    out = StringIO()
    call_command("maintain", stdout=out)
    assert "releases listed after settling" in out.getvalue()
    listed = dict(Release.objects.values_list("name", "listed"))
    assert listed == {"Near.Complete.S01E01.720p-GRP": True, "Half.Done.S01E01.720p-GRP": False}
    # Both were looked at: the queue is empty until a batch touches one again.
    assert not ReleaseSettling.objects.exists()
    store(group, report("Half.Done.S01E01.720p-GRP.part03.rar", range(41, 71), 100, index=3,
                        count=3))  # fmt: skip
    assert ReleaseSettling.objects.count() == 1  # 270/300: queued again, still unlisted


def test_a_batch_touching_a_queued_release_restarts_its_quiet_time():
    group = GroupFactory()
    files = big_release(missing=2)
    store(group, *files[:2])
    backdate_queue(500)
    store(group, files[2])  # the release is touched again: not quiet
    assert settle_releases() == 0
    assert not Release.objects.get().listed


@pytest.mark.django_db(transaction=True)
def test_settling_skips_a_release_a_batch_holds_and_keeps_it_queued():
    group = GroupFactory()
    store(group, *big_release(missing=2))
    backdate_queue(500)
    release = Release.objects.get()
    held, done = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                list(Release.objects.select_for_update().filter(id=release.id))
                held.set()
                done.wait(30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        assert held.wait(30)
        assert settle_releases() == 0  # at once, without waiting
    finally:
        done.set()
        holder.join(30)
    assert ReleaseSettling.objects.filter(release_id=release.id).exists()
    assert settle_releases() == 1


# --- recount -------------------------------------------------------------------------------


def double_count():
    """A cross-posted release as the old triggers kept it: each copy counted."""
    sql(
        "UPDATE catalog_release SET files_seen = files_seen * 2, size = size * 2,"
        " segments_present = segments_present * 2, segments_expected = segments_expected * 2"
    )


def test_recount_corrects_a_double_count_and_writes_nothing_twice(capsys):
    files = release_files()
    store(GroupFactory(), *files[:3])
    store(GroupFactory(), *files[:3])  # three of five files, in two groups
    store(GroupFactory(), *release_files("Other.Release.S01E01-GRP"))  # right already
    double_count()
    sql("UPDATE catalog_release SET listed = true")  # 6 of 5 files "seen": listed wrongly
    out = StringIO()
    call_command("recount_releases", "--batch-size", "1", stdout=out)
    assert "2 releases counted: 2 corrected, 0 listed, 1 no longer listed." in out.getvalue()
    assert "2/2 releases" in capsys.readouterr().err
    release = Release.objects.get(name=STEM)
    assert (release.files_seen, release.size, release.listed) == (3, articles_bytes(files[:3]),
                                                                  False)  # fmt: skip
    assert Release.objects.get(name="Other.Release.S01E01-GRP").listed
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, xmin::text FROM catalog_release ORDER BY id")
        before = cursor.fetchall()
    assert recount_releases().changed == 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, xmin::text FROM catalog_release ORDER BY id")
        assert cursor.fetchall() == before  # no row rewritten


def test_recount_queues_an_unlisted_release_above_the_floor_for_the_upkeep():
    store(GroupFactory(), *big_release(missing=2))
    ReleaseSettling.objects.all().delete()  # stored before the queue existed
    sql("UPDATE catalog_release SET updated_at = now() - interval '1 day'")
    recount_releases()
    assert settle_releases() == 1


@pytest.mark.django_db(transaction=True)
def test_recount_counts_a_batch_that_committed_while_it_waited_for_the_lock():
    group, other = GroupFactory(), GroupFactory()
    files = release_files()
    store(group, *files[:4])
    store(other, *files[:4])
    double_count()
    in_batch, commit = threading.Event(), threading.Event()

    def batch():
        with transaction.atomic():
            store(group, files[4])  # holds the release's row until commit
            in_batch.set()
            assert commit.wait(30)

    def recount():
        assert in_batch.wait(30)
        return recount_releases()

    def release_when_recount_waits():
        assert in_batch.wait(30)
        deadline = time.monotonic() + 30
        while not _a_recount_waits_for_a_lock():
            assert time.monotonic() < deadline, "the recount never waited for the batch"
            time.sleep(0.01)
        commit.set()

    _, summary, _ = run_threads([batch, recount, release_when_recount_waits])
    assert summary.changed == 1
    release = Release.objects.get()
    assert (release.files_seen, release.segments_present, release.size) == (
        5,
        10,
        articles_bytes(files),
    )
    assert release.listed  # complete, counted with the batch's file


def _a_recount_waits_for_a_lock():
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND query LIKE %s",
            ["%FOR UPDATE%"],
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_a_file_two_groups_write_at_once_to_a_release_a_third_batch_just_made_counts_once(
    monkeypatch,
):
    """Batch B misses the release A is creating, waits for A's key lock, then finds
    it made; batch C finds it made too. Each merges the same file in its own group.
    B must hold the release's row as C does, or each trigger misses the other's
    uncommitted copy and the file is counted twice."""
    files = release_files()
    creator, second, third = GroupFactory(), GroupFactory(), GroupFactory()
    created, a_commit = threading.Event(), threading.Event()
    b_assigned, b_go, b_done = threading.Event(), threading.Event(), threading.Event()
    c_merged, c_commit = threading.Event(), threading.Event()
    real_assign = services.assign_releases

    def assign(*args, **kwargs):
        ids = real_assign(*args, **kwargs)
        if threading.current_thread().name == "batch-b":
            b_assigned.set()
            assert b_go.wait(30), "b_go"
        return ids

    monkeypatch.setattr(services, "assign_releases", assign)

    def batch_a():
        with transaction.atomic():
            store(creator, files[0])
            created.set()
            assert a_commit.wait(30), "a_commit"

    def batch_b():
        threading.current_thread().name = "batch-b"
        assert created.wait(30), "created"
        with transaction.atomic():
            store(second, files[1])
        b_done.set()

    def batch_c():
        assert b_assigned.wait(30), "b_assigned"
        with transaction.atomic():
            store(third, files[1])
            c_merged.set()
            assert c_commit.wait(30), "c_commit"

    def conduct():
        assert created.wait(30), "created"
        wait_for(lambda: _waits_for_a_lock("%pg_advisory_xact_lock%"), "B never waited for A")
        a_commit.set()
        assert b_assigned.wait(30), "b_assigned"
        # C merges at once (the race) or waits for B's lock on the release.
        wait_for(lambda: c_merged.is_set() or _waits_for_a_lock("%FOR UPDATE%"), "C never ran")
        b_go.set()
        # B waits for C's row (the race: its merge, or its commit) or B commits.
        wait_for(
            lambda: b_done.is_set() or _waits_for_a_lock("%", but_not="%FOR UPDATE%"),
            "B never merged",
        )
        c_commit.set()

    run_threads([batch_a, batch_b, batch_c, conduct])
    release = Release.objects.get()
    assert CatalogFile.objects.count() == 3
    assert (release.files_seen, release.segments_present, release.size) == (
        2,
        4,
        articles_bytes(files[:2]),
    )


def wait_for(condition, failure):
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.01)


def _waits_for_a_lock(query, but_not=""):
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND query LIKE %s AND query NOT LIKE %s",
            [query, but_not],
        )
        return cursor.fetchone()[0] > 0
