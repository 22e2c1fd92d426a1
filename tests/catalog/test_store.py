"""Merging reported files into the catalog (the service, on real PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import psycopg
import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.models import CatalogFile
from catalog.selectors import file_ids_by_message_id
from catalog.services import publish_rules, store_files
from catalog.validation import FileReport
from tests.support.factories import GroupFactory
from tests.support.reports import POSTER, catalog_snapshot, msgid, report
from tests.support.system_postgres import SystemPostgres
from tests.support.threads import run_threads
from usenet.rules import RuleSet, file_key

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def store(group, *reports, fragments=()):
    return store_files(group.id, None, list(reports), list(fragments))


def test_a_file_completes_when_all_its_segments_have_arrived():
    group = GroupFactory()
    assert store(group, fragments=[report(parts=[1, 2], total=4)]) == 1
    first = CatalogFile.objects.get()
    assert (first.segments, first.complete) == (2, False)
    assert store(group, fragments=[report(parts=[4, 3], total=4)]) == 1
    file = CatalogFile.objects.get()
    assert file.id == first.id
    assert file.parts == [1, 2, 3, 4]
    assert file.message_ids == [msgid("name.part01.rar", p) for p in (1, 2, 3, 4)]
    assert file.articles == [1001, 1002, 1003, 1004]
    assert (file.segments, file.complete, file.total) == (4, True, 4)
    assert file.bytes == sum(700_000 + p for p in (1, 2, 3, 4))
    assert file.name == "name.part01.rar"
    assert (file.file_index, file.file_count) == (1, 12)


def test_the_earliest_date_and_the_lowest_parts_subject_are_kept():
    group = GroupFactory()
    store(group, fragments=[report(parts=[3], total=3, date=1_700_000_500)])
    store(group, fragments=[report(parts=[1], total=3, date=1_700_000_100)])
    store(group, fragments=[report(parts=[2], total=3, date=1_700_000_300)])
    file = CatalogFile.objects.get()
    assert int(file.date.timestamp()) == 1_700_000_100
    assert file.subject.endswith("(1/3)")


def test_a_replayed_or_overlapping_report_changes_nothing():
    group = GroupFactory()
    store(group, report(parts=[1, 2, 3], total=3))
    before = catalog_snapshot()
    version = _row_version()
    assert store(group, report(parts=[1, 2, 3], total=3)) == 0
    assert store(group, fragments=[report(parts=[2], total=3)]) == 0
    assert catalog_snapshot() == before
    assert _row_version() == version  # not even rewritten


def _row_version():
    with connection.cursor() as cursor:
        cursor.execute("SELECT xmin::text FROM catalog_file")
        return cursor.fetchall()


def test_a_different_message_id_for_a_stored_part_keeps_the_first_and_counts_a_conflict():
    group = GroupFactory()
    store(group, report(parts=[1, 2], total=2))
    other = report(parts=[2], total=2, host="elsewhere")
    assert store(group, fragments=[other]) == 1
    file = CatalogFile.objects.get()
    assert file.message_ids == [msgid("name.part01.rar", 1), msgid("name.part01.rar", 2)]
    assert file.conflicts == 1
    assert file.conflict_ids == [msgid("name.part01.rar", 2, "elsewhere")]
    # The same conflicting report again counts nothing more.
    assert store(group, fragments=[other]) == 0
    assert CatalogFile.objects.get().conflicts == 1


def test_conflicts_inside_one_batch_are_counted_too():
    group = GroupFactory()
    stored = store(
        group,
        report(parts=[1, 2], total=2),
        fragments=[report(parts=[1], total=2, host="elsewhere")],
    )
    assert stored == 1
    file = CatalogFile.objects.get()
    assert (file.segments, file.conflicts) == (2, 1)


def test_segments_out_of_part_order_in_one_report_are_stored_in_part_order():
    group = GroupFactory()
    in_order = report(parts=[1, 2, 3, 4], total=4)
    shuffled = [in_order.segments[i] for i in (2, 0, 3, 1)]
    again = (2, 999, "<another@host>", 5)  # part 2 a second time, another message-id
    store(group, FileReport(in_order.subject, POSTER, in_order.date, 4, [*shuffled, again]))
    file = CatalogFile.objects.get()
    assert file.segment_rows() == [(p, a, m, s) for p, a, m, s in in_order.segments]
    assert (file.segments, file.complete, file.bytes) == (4, True, sum(s[3] for s in shuffled))
    assert (file.conflicts, file.conflict_ids) == (1, ["<another@host>"])


def test_the_coordinator_derives_the_key_itself():
    group = GroupFactory(name="alt.binaries.keys")
    # Two reports of one file whose subjects differ only in the segment counter
    # and the yEnc marker's case merge into one file.
    a = report(parts=[1], total=3)
    b = FileReport(
        subject=a.subject.replace("yEnc (1/3)", "YENC (2/3)"),
        poster=POSTER,
        date=a.date,
        total=3,
        segments=[(2, 5, "<x2@h>", 10)],
    )
    store(group, a, b)
    file = CatalogFile.objects.get()
    expected = RuleSet.default().identify(group.name, POSTER, a.subject)
    assert bytes(file.key) == expected
    assert file.segments == 2


def test_the_subjects_total_wins_over_a_nodes_total():
    group = GroupFactory()
    item = report(parts=[1, 2], total=2)
    lying = FileReport(item.subject, item.poster, item.date, 5, item.segments)
    store(group, lying)
    file = CatalogFile.objects.get()
    assert (file.total, file.complete) == (2, True)


def test_an_unparseable_subject_is_keyed_by_the_whole_subject():
    group = GroupFactory(name="alt.binaries.plain")
    item = FileReport("no counter here.bin", POSTER, 1_700_000_000, 2, [(1, 5, "<p1@h>", 10)])
    store(group, item)
    store(group, FileReport(item.subject, POSTER, 1_700_000_000, 2, [(2, 6, "<p2@h>", 10)]))
    file = CatalogFile.objects.get()
    assert bytes(file.key) == file_key(group.name, POSTER, "no counter here.bin", 2)
    assert file.complete


def test_posters_the_rules_exclude_are_dropped():
    group = GroupFactory()
    rules = RuleSet.default().to_dict()
    rules["poster_exclude"] = [r"spam@"]
    publish_rules(rules)
    spam = report(poster="bot <spam@example.com>")
    assert store(group, spam, report(name="kept.rar")) == 1
    assert list(CatalogFile.objects.values_list("name", flat=True)) == ["kept.rar"]
    assert CatalogFile.objects.get().rule_version == 2


def test_the_same_file_in_two_groups_is_two_catalog_files_found_by_message_id():
    one, two = GroupFactory(), GroupFactory()
    store(one, report(parts=[1, 2], total=2))
    store(two, report(parts=[1, 2], total=2))
    ids = file_ids_by_message_id(msgid("name.part01.rar", 2))
    assert len(ids) == 2
    assert set(CatalogFile.objects.filter(id__in=ids).values_list("group_id", flat=True)) == {
        one.id,
        two.id,
    }
    assert file_ids_by_message_id("<nobody@nowhere>") == []


def test_the_message_id_lookup_uses_its_index():
    GroupFactory()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT id FROM catalog_file WHERE catalog_message_id_hashes(message_ids)"
            " @> ARRAY[hashtext('<a@b>')]"
        )
        plan = " ".join(row[0] for row in cursor.fetchall())
    assert "catalog_file_message_ids_idx" in plan


# --- any order, any duplication ------------------------------------------------

FILES = [("a.part1.rar", 3), ("a.part2.rar", 5), ("b.par2", 1)]


@st.composite
def reports_of_files(draw):
    """Reports of a few files: each a non-empty subset of one file's parts."""
    out = []
    for name, total in FILES:
        parts = list(range(1, total + 1))
        pieces = draw(
            st.lists(
                st.lists(st.sampled_from(parts), min_size=1, max_size=total, unique=True),
                min_size=1,
                max_size=4,
            )
        )
        covered = sorted({p for piece in pieces for p in piece})
        for piece in [*pieces, covered]:
            first = min(piece)
            made = report(name, sorted(piece), total, date=1_700_000_000 + first)
            # A node may list a file's segments in any order.
            made.segments = draw(st.permutations(made.segments))
            out.append(made)
    return out


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), reports=reports_of_files())
def test_any_order_and_any_duplication_of_the_same_reports_yields_the_same_catalog(data, reports):
    group = GroupFactory(name="alt.binaries.property")

    def catalog_after(batches):
        with transaction.atomic():
            for batch in batches:
                store_files(group.id, None, batch, [])
            snapshot = catalog_snapshot()
            transaction.set_rollback(True)
        return snapshot

    expected = catalog_after([[r] for r in reports])
    shuffled = data.draw(st.permutations(reports + data.draw(st.lists(st.sampled_from(reports)))))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(shuffled)), max_size=5)))
    batches = [shuffled[a:b] for a, b in zip([0, *cuts], [*cuts, len(shuffled)], strict=True)]
    assert catalog_after(batches) == expected


# --- concurrency ---------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_batches_for_the_same_files_at_once_lose_no_segment():
    group = GroupFactory()
    names = [f"f{i:02d}.rar" for i in range(30)]
    halves = (
        [report(n, [1, 2], total=4) for n in names],
        [report(n, [3, 4], total=4) for n in reversed(names)],  # the other order
    )

    def store_in_one_transaction(batch):
        with transaction.atomic():
            return store_files(group.id, None, batch, [])

    run_threads([partial(store_in_one_transaction, half) for half in halves])
    assert CatalogFile.objects.count() == 30
    assert set(CatalogFile.objects.values_list("complete", flat=True)) == {True}


def test_the_trigram_index_exists_exactly_when_the_server_offers_pg_trgm():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
        available = cursor.fetchone() is not None
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'catalog_file_name_trgm_idx'")
        indexed = cursor.fetchone() is not None
    assert indexed == available
    # With or without the index, a search by part of the name finds the file.
    group = GroupFactory()
    store_files(group.id, None, [report("Movie.Night.part01.rar"), report("other.nfo")], [])
    found = CatalogFile.objects.filter(name__icontains="movie.night").values_list("name", flat=True)
    assert list(found) == ["Movie.Night.part01.rar"]


@pytest.mark.slow
def test_name_search_uses_the_trigram_index_on_a_server_with_pg_trgm():
    """Migrated against the machine's own PostgreSQL (with contrib), the index serves `q`."""
    query = CatalogFile.objects.filter(name__icontains="movie").values("id")
    sql, params = query.query.sql_with_params()
    with SystemPostgres() as server:
        with psycopg.connect(**server.conninfo(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE catalog_trgm")
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT,
            env={
                **os.environ,
                "DATABASE_URL": server.url("catalog_trgm"),
                "SECRET_KEY": "test-catalog-trgm-key",
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert migrate.returncode == 0, migrate.stderr
        with psycopg.connect(**server.conninfo("catalog_trgm")) as conn:
            assert conn.execute(
                "SELECT 1 FROM pg_indexes WHERE indexname = 'catalog_file_name_trgm_idx'"
            ).fetchone()
            conn.execute("SET enable_seqscan = off")
            plan = " ".join(row[0] for row in conn.execute("EXPLAIN " + sql, params).fetchall())
    assert "catalog_file_name_trgm_idx" in plan


def test_the_rules_in_force_are_cached_and_a_new_version_is_seen(
    settings, django_assert_num_queries
):
    from catalog.rulesets import current_rules, forget_current_rules

    settings.RULES_CHECK_SECONDS = 3600
    forget_current_rules()
    assert current_rules().version == 1
    with django_assert_num_queries(0):
        assert current_rules().version == 1
    rules = RuleSet.default().to_dict()
    assert publish_rules(rules, note="v2").version == 2
    assert current_rules().version == 2  # the publishing process sees it at once
    settings.RULES_CHECK_SECONDS = 0
    with connection.cursor() as cursor:  # another process publishing v3
        cursor.execute(
            "INSERT INTO rule_set_version (version, rules, created_at, created_by, note)"
            " SELECT 3, rules, now(), 'other', '' FROM rule_set_version WHERE version = 2"
        )
    assert current_rules().version == 3
