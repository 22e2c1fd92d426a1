"""An upgraded catalog serves its releases at once and catches up by itself.

Releases stored before migrations 0002-0005 carry no name fields, no listing
and totals not counted the new way. Search and RSS serve such a release when
its stored totals are complete (`catalog_release_served`), and the upkeep
(`catalog.release_backfill`, in `manage.py maintain`) reads and counts them
again a bounded number a run, with the services of the two commands.
"""

from __future__ import annotations

import threading

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from catalog.models import Release, ReleaseBackfill
from catalog.release_backfill import backfill_releases, backfill_status
from catalog.services import store_files
from console.selectors import seed_status
from newznab import services as newznab_services
from seeding import maintenance
from tests.support.factories import GroupFactory
from tests.support.newznab import call, parse
from tests.support.reports import release_files
from usenet.release_names import FIELDS_VERSION

pytestmark = pytest.mark.django_db

COMPLETE = [
    "Some.Show.S01E01.1080p.WEB.h264-GRP",
    "Some.Show.S01E02.1080p.WEB.h264-GRP",
    "A.Great.Movie.2019.1080p.BluRay.x264-GRP",
]
INCOMPLETE = "Some.Show.S01E03.1080p.WEB.h264-GRP"


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.migrate(target)


def served(client, key):
    """The names search and RSS serve by default, each as a set."""
    search = parse(call(client, t="search", apikey=key))
    tv = parse(call(client, t="tvsearch", q="Some Show", season="1", ep="1", apikey=key))
    rss = parse(client.get("/rss", {"apikey": key}))
    return [{item.findtext("title") for item in doc.iter("item")} for doc in (search, tv, rss)]


def stored_before_the_upgrade():
    """Releases stored, then the catalog taken back to 0001 and forward (as an upgrade)."""
    group = GroupFactory()
    for i, stem in enumerate(COMPLETE):
        store_files(group.id, None, [], release_files(stem, date=1_700_000_000 + 100 * i))
    store_files(group.id, None, [], release_files(INCOMPLETE, date=1_700_001_000)[:-1])
    migrate([("catalog", "0001_initial")])
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_search_and_rss_serve_the_complete_releases_before_during_and_after_the_backfill(
    settings,
):
    stored_before_the_upgrade()
    assert not Release.objects.filter(listed=True).exists()  # as the migrations leave them
    assert set(Release.objects.values_list("fields_version", "counted")) == {(0, False)}
    _issued, key = newznab_services.issue_api_key("sonarr")
    client = Client()
    complete = set(COMPLETE)
    # Before the upkeep: the complete ones by their stored totals; the episode's
    # fields are not read yet, so tvsearch finds it by its words.
    assert served(client, key) == [complete, {COMPLETE[0]}, complete]

    settings.RELEASE_BACKFILL_BATCH = 1  # one release of each step a run
    runs = 0
    while backfill_releases():
        runs += 1
        assert served(client, key) == [complete, {COMPLETE[0]}, complete], runs
    assert runs >= 4  # four releases, one a run

    releases = {r.name: r for r in Release.objects.all()}
    assert {n for n, r in releases.items() if r.listed} == complete
    assert all(r.counted and r.fields_version == FIELDS_VERSION for r in releases.values())
    assert releases[COMPLETE[0]].seasons == [1] and releases[COMPLETE[0]].episodes == [1]
    assert releases[COMPLETE[2]].year == 2019
    assert served(client, key) == [complete, {COMPLETE[0]}, complete]
    assert backfill_status().done
    assert backfill_releases() == 0


def test_a_fresh_catalog_has_nothing_to_backfill_and_new_releases_need_none():
    store_files(GroupFactory().id, None, [], release_files())
    release = Release.objects.get()
    assert release.counted and release.fields_version == FIELDS_VERSION
    assert backfill_releases() == 0
    assert backfill_status().done


def pre_upgrade(*names):
    """Releases as an upgrade leaves them (fields unread, not counted), through the batch path."""
    group = GroupFactory()
    for i, name in enumerate(names):
        store_files(group.id, None, [], release_files(name, date=1_700_000_000 + 100 * i))
    Release.objects.update(fields_version=0, counted=False, listed=False, title_key="")


def test_the_backfill_resumes_from_its_position_and_starts_again_for_a_new_parser(settings):
    pre_upgrade(*COMPLETE)
    ids = sorted(Release.objects.values_list("id", flat=True))
    settings.RELEASE_BACKFILL_BATCH = 1
    assert backfill_releases() == 2  # the first release read, and counted
    fields = ReleaseBackfill.objects.get(name="fields")
    assert (fields.version, fields.after, fields.upto) == (FIELDS_VERSION, ids[0], ids[-1])
    assert backfill_status().to_parse == ids[-1] - ids[0]
    # A new process (a kill meanwhile) goes on from the stored position.
    settings.RELEASE_BACKFILL_BATCH = 100
    assert backfill_releases() == 4
    assert not Release.objects.filter(fields_version__lt=FIELDS_VERSION).exists()
    assert not Release.objects.filter(counted=False).exists()
    # A parser version the position was not read for starts it from the first release.
    ReleaseBackfill.objects.filter(name="fields").update(version=FIELDS_VERSION - 1)
    Release.objects.filter(id=ids[1]).update(fields_version=0, title_key="")
    assert backfill_releases() == 1
    assert Release.objects.get(id=ids[1]).title_key != ""


def test_a_run_walks_at_most_its_batch_of_ids_however_many_are_read_already(settings):
    pre_upgrade(*COMPLETE)
    Release.objects.update(fields_version=FIELDS_VERSION, counted=True)  # as if read by hand
    ids = sorted(Release.objects.values_list("id", flat=True))
    settings.RELEASE_BACKFILL_BATCH = 1
    assert backfill_releases() == 0
    assert ReleaseBackfill.objects.get(name="fields").after == ids[0]


def test_the_upkeep_runs_it_and_maintain_and_seed_status_report_it(settings):
    pre_upgrade(*COMPLETE)
    settings.RELEASE_BACKFILL_BATCH = 1
    assert maintenance.BACKFILL in maintenance.tasks()
    out = call_command("maintain")
    assert "releases read or counted again after an upgrade" in out
    status = call_command("seed_status")
    assert "After the upgrade, releases to parse: about 2; to count: about 2" in status
    assert seed_status()["release_backfill"] == {"to_parse": 2, "to_count": 2}
    settings.RELEASE_BACKFILL_BATCH = 100
    call_command("maintain")
    assert set(Release.objects.values_list("listed", flat=True)) == {True}
    assert "After the upgrade" not in call_command("seed_status")
    assert seed_status()["release_backfill"] is None


def test_the_lease_path_runs_a_small_step_and_maintain_its_whole_batch(settings, monkeypatch):
    """A node's lease call waits for the upkeep it runs: there the backfill takes
    BACKFILL_LEASE_STEP releases of each kind, not RELEASE_BACKFILL_BATCH."""
    pre_upgrade(*COMPLETE)
    settings.RELEASE_BACKFILL_BATCH = 100
    monkeypatch.setattr(maintenance, "BACKFILL_LEASE_STEP", 1)
    maintenance.mark_all_run()
    maintenance.BACKFILL.last_run = float("-inf")
    monkeypatch.setattr(maintenance, "_next_due", float("-inf"))
    [outcome] = maintenance.run_due()
    assert (outcome.task, outcome.count) == (maintenance.BACKFILL, 2)  # one read, one counted
    assert Release.objects.filter(counted=False).count() == len(COMPLETE) - 1
    assert maintenance.run_task(maintenance.BACKFILL) == 4  # maintain: the rest at once
    assert not Release.objects.filter(counted=False).exists()


def test_a_recount_batch_that_finds_none_while_some_are_left_does_not_end_the_step(
    settings, monkeypatch
):
    """A concurrent recount can take a batch's rows from under its lock (they no longer
    match `NOT counted`): the step ends only when the partial index holds none."""
    pre_upgrade(*COMPLETE)
    monkeypatch.setattr("catalog.release_backfill.recount_batch", lambda *a, **kw: 0)
    backfill_releases()
    assert backfill_status().to_count == 3
    monkeypatch.undo()
    backfill_releases()
    assert not Release.objects.filter(counted=False).exists()
    assert backfill_status().done


@pytest.mark.django_db(transaction=True)
def test_a_position_another_process_holds_is_left_to_it(settings):
    pre_upgrade(*COMPLETE)
    settings.RELEASE_BACKFILL_BATCH = 1
    backfill_releases()  # both positions exist now
    held, go = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic(using="default"):
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT 1 FROM catalog_release_backfill WHERE name = 'fields' FOR UPDATE"
                    )
                held.set()
                go.wait(30)
        finally:
            connection.close()

    other = threading.Thread(target=hold)
    other.start()
    try:
        assert held.wait(30)
        assert backfill_releases() == 1  # the count's step alone
        assert Release.objects.filter(fields_version__lt=FIELDS_VERSION).count() == 2
    finally:
        go.set()
        other.join()
    settings.RELEASE_BACKFILL_BATCH = 100
    backfill_releases()
    assert backfill_status().done
