"""The catalog's per-group totals (group_catalog_summary) against a recount of the files."""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime
from functools import partial
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import catalog
from catalog.models import SUMMARY_SLOTS, CatalogFile
from catalog.selectors import CatalogTotals, catalog_totals, catalog_totals_by_group
from catalog.services import delete_files, prune_incomplete_files, store_files
from indexer.models import Group
from tests.support.factories import GroupFactory
from tests.support.reports import report
from tests.support.threads import run_threads

pytestmark = pytest.mark.django_db


def recount() -> dict[int, CatalogTotals]:
    """Each group's totals the slow way: COUNT and SUM over catalog_file."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT group_id, count(*), count(*) FILTER (WHERE complete), sum(segments),"
            " sum(bytes), sum(conflicts), max(date) FROM catalog_file GROUP BY group_id"
        )
        return {
            row[0]: CatalogTotals(*(int(v) for v in row[1:6]), newest=row[6])
            for row in cursor.fetchall()
        }


def summarized() -> dict[int, CatalogTotals]:
    """Each group's totals from the summary (groups whose totals are all zero left out)."""
    ids = list(Group.objects.values_list("id", flat=True))
    return {g: t for g, t in catalog_totals_by_group(ids).items() if t != CatalogTotals()}


def whole(per_group: dict[int, CatalogTotals]) -> CatalogTotals:
    values = per_group.values()
    return CatalogTotals(
        files=sum(t.files for t in values),
        complete=sum(t.complete for t in values),
        segments=sum(t.segments for t in values),
        bytes=sum(t.bytes for t in values),
        conflicts=sum(t.conflicts for t in values),
        newest=max((t.newest for t in values if t.newest), default=None),
    )


def assert_exact() -> None:
    counted = recount()
    assert summarized() == counted
    assert catalog_totals() == whole(counted)


def store(group, *reports, fragments=()):
    return store_files(group.id, None, list(reports), list(fragments))


def at(unix: int) -> datetime:
    return datetime.fromtimestamp(unix, UTC)


def age(names, hours=10):
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE catalog_file SET updated_at = now() - make_interval(hours => %s)"
            " WHERE name = ANY(%s)",
            [hours, list(names)],
        )


def test_new_files_merges_replays_and_conflicts_are_counted_exactly():
    one, two = GroupFactory(), GroupFactory()
    store(one, report("a.rar", [1, 2], total=4), report("b.rar", [1], total=1))
    store(two, report("c.rar", [1, 2, 3], total=3, date=1_700_000_900))
    assert_exact()
    store(one, fragments=[report("a.rar", [3, 4], total=4)])  # completes a.rar
    store(one, report("b.rar", [1], total=1))  # a replay: nothing changes
    store(one, fragments=[report("b.rar", [1], total=1, host="elsewhere")])  # a conflict
    assert_exact()
    totals = catalog_totals_by_group([one.id])[one.id]
    assert (totals.files, totals.complete, totals.conflicts) == (2, 2, 1)
    assert totals.segments == 5
    assert catalog_totals().newest == at(1_700_000_900)


def test_a_merge_that_moves_the_newest_file_earlier_lowers_the_newest_date():
    group = GroupFactory()
    store(group, report("old.rar", [1], total=2, date=1_700_000_000))
    store(group, report("new.rar", [2], total=2, date=1_700_000_500))
    assert catalog_totals().newest == at(1_700_000_500)
    # The newest file's first part, posted earlier, arrives later.
    store(group, fragments=[report("new.rar", [1], total=2, date=1_700_000_100)])
    assert catalog_totals().newest == at(1_700_000_100)
    store(group, fragments=[report("new.rar", [1], total=2, date=1_699_999_000)])
    assert catalog_totals().newest == at(1_700_000_000)  # old.rar is the newest now
    assert_exact()


def test_pruning_keeps_the_totals_exact_and_recounts_the_newest_date():
    group = GroupFactory()
    store(
        group,
        report("kept.rar", [1, 2], total=2, date=1_700_000_000),
        report("stale.rar", [1], total=3, date=1_700_000_700),  # incomplete, the newest
        report("growing.rar", [1], total=3, date=1_700_000_300),
    )
    age(["stale.rar", "kept.rar"])
    assert prune_incomplete_files(1).files == 1
    assert_exact()
    assert catalog_totals().newest == at(1_700_000_300)


def test_deleting_files_keeps_the_totals_exact():
    one, two = GroupFactory(), GroupFactory()
    store(one, report("a.rar", [1, 2], total=2, date=1_700_000_100), report("b.rar", [1], total=2))
    store(two, report("c.rar", [1], total=1, date=1_700_000_200))
    newest = CatalogFile.objects.filter(name__in=["a.rar", "c.rar"]).values_list("id", flat=True)
    assert delete_files(newest) == 2
    assert_exact()
    assert catalog_totals_by_group([two.id])[two.id] == CatalogTotals()
    assert catalog_totals().newest == at(1_700_000_000)


def test_a_deleted_group_takes_its_totals_along():
    group, other = GroupFactory(), GroupFactory()
    store(group, report("a.rar", [1], total=1))
    store(other, report("b.rar", [1], total=1))
    group.delete()
    assert_exact()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM group_catalog_summary WHERE group_id = %s", [group.id])
        assert cursor.fetchone()[0] == 0


def test_a_truncated_catalog_has_no_totals():
    store(GroupFactory(), report("a.rar", [1], total=1))
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred checks pending
        cursor.execute("TRUNCATE catalog_file")
    assert catalog_totals() == CatalogTotals()


def test_the_triggers_stripe_over_as_many_slots_as_the_model_says():
    text = (Path(catalog.__file__).parent / "sql" / "schema.sql").read_text()
    assert f"pg_current_xact_id()::text::bigint % {SUMMARY_SLOTS}" in text


def corrupt(group_id: int, **values: int) -> None:
    with connection.cursor() as cursor:
        for column, value in values.items():
            assert column in {"files", "complete", "segments", "bytes", "conflicts"}
            cursor.execute(
                "UPDATE group_catalog_summary SET " + column + " = " + column + " + %s"
                " WHERE group_id = %s",
                [value, group_id],
            )


def test_the_rebuild_command_reports_drift_and_fixes_it():
    sound = GroupFactory(name="alt.binaries.sound")
    drifted = GroupFactory(name="alt.binaries.drifted")
    store(sound, report("a.rar", [1, 2], total=2))
    store(drifted, report("b.rar", [1], total=2), report("c.rar", [1], total=1))
    corrupt(drifted.id, files=3, segments=-1)
    out, err = StringIO(), StringIO()
    call_command("rebuild_catalog_summary", stdout=out, stderr=err)
    text = out.getvalue()
    assert "alt.binaries.drifted" in text and "alt.binaries.sound" not in text
    assert re.search(r"drifted\s+files\s+5\s+2\s+-3\n", text), text
    assert re.search(r"drifted\s+segments\s+1\s+2\s+\+1\n", text), text
    assert "2 groups checked, 1 with drift (fixed)" in text
    assert "2/2 groups" in err.getvalue()  # progress
    assert_exact()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM group_catalog_summary WHERE slot <> 0")
        assert cursor.fetchone()[0] == 0
    again = StringIO()
    call_command("rebuild_catalog_summary", stdout=again, stderr=StringIO())
    assert "2 groups checked, no drift" in again.getvalue()


# --- random batches, replays and prunes ------------------------------------------

FILES = [("a.part1.rar", 3), ("a.part2.rar", 4), ("b.par2", 1), ("c.nfo", 2)]
DATES = st.integers(1_700_000_000, 1_700_000_050)


@st.composite
def a_batch(draw):
    """A batch for one of two groups: some files, each with some parts, dates and hosts."""
    files = []
    for name, total in draw(st.lists(st.sampled_from(FILES), min_size=1, unique=True)):
        parts = draw(st.lists(st.integers(1, total), min_size=1, max_size=total, unique=True))
        host = draw(st.sampled_from(["host", "host", "other"]))  # "other": a conflict
        files.append(report(name, sorted(parts), total, date=draw(DATES), host=host))
    return draw(st.integers(0, 1)), files


steps = st.one_of(
    a_batch().map(lambda b: ("store", b)),
    st.integers(0, 20).map(lambda i: ("replay", i)),
    st.lists(st.sampled_from([f for f, _ in FILES]), unique=True).map(lambda n: ("prune", n)),
    st.lists(st.integers(0, 7), unique=True, max_size=3).map(lambda i: ("delete", i)),
)


def run_step(groups: list[Group], done: list, step: tuple) -> None:
    kind, arg = step
    if kind == "store" or (kind == "replay" and done):
        which, files = arg if kind == "store" else done[arg % len(done)]
        store_files(groups[which].id, None, files[:1], files[1:])
        done.append((which, files))
    elif kind == "prune":
        age(arg)
        prune_incomplete_files(1, batch_size=2)
    elif kind == "delete":
        ids = list(CatalogFile.objects.order_by("id").values_list("id", flat=True))
        delete_files([ids[i] for i in arg if i < len(ids)])


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(steps, min_size=1, max_size=12))
def test_the_summary_equals_a_recount_after_any_batches_replays_prunes_and_deletes(plan):
    with transaction.atomic():
        groups = [GroupFactory(name=f"alt.binaries.summary{i}") for i in (0, 1)]
        done: list = []
        for step in plan:
            run_step(groups, done, step)
            assert_exact()
        transaction.set_rollback(True)


# --- concurrency --------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_batches_of_one_group_at_once_prunes_and_deletes_keep_it_exact():
    group = GroupFactory()
    names = [f"f{i:02d}.rar" for i in range(40)]
    store(group, *[report(n, [2], total=3, date=1_700_000_000 + i) for i, n in enumerate(names)])
    age(names[:10])

    def in_transaction(call):
        with transaction.atomic():
            return call()

    def batch(parts, names, date):
        files = [report(n, parts, total=3, date=date) for n in names]
        return partial(in_transaction, partial(store_files, group.id, None, [], files))

    run_threads(
        [
            batch([1], names[10:25], 1_600_000_000),  # earlier dates: lowers them
            batch([3], names[20:40], 1_800_000_000),
            batch([1], names[30:], 1_600_000_000),
            batch([3], [f"new{i}.rar" for i in range(20)], 1_900_000_000),
            partial(prune_incomplete_files, 1, batch_size=3),
            partial(
                delete_files,
                CatalogFile.objects.filter(name__in=names[35:]).values_list("id", flat=True),
            ),
        ]
    )
    assert_exact()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_recount_of_the_newest_date_waits_for_the_groups_uncommitted_batches():
    """A delete of the newest file recounts it; a batch that stored a newer file
    but has not committed yet must be in that count, not lost."""
    group = GroupFactory()
    store(group, report("old.rar", [1], total=1, date=1_700_000_000))
    store(group, report("newest.rar", [1], total=1, date=1_700_000_900))
    newest = CatalogFile.objects.get(name="newest.rar").id
    with connection.cursor() as cursor:  # every slot exists: the batch updates one
        cursor.execute(
            "INSERT INTO group_catalog_summary (group_id, slot, files, complete, segments,"
            " bytes, conflicts) SELECT %s, s, 0, 0, 0, 0, 0 FROM generate_series(0, %s) AS s"
            " ON CONFLICT DO NOTHING",
            [group.id, SUMMARY_SLOTS - 1],
        )
    stored, release = threading.Event(), threading.Event()

    def batch_that_commits_late():
        with transaction.atomic():
            store(group, report("newer.rar", [1], total=1, date=1_700_000_500))
            stored.set()
            release.wait(30)

    def delete_the_newest():
        stored.wait(30)
        delete_files([newest])

    def let_the_batch_commit():
        stored.wait(30)
        time.sleep(0.5)  # the delete is waiting by now
        release.set()

    run_threads([batch_that_commits_late, delete_the_newest, let_the_batch_commit])
    assert_exact()
    assert catalog_totals().newest == at(1_700_000_500)
