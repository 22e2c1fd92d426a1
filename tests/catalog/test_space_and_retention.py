"""Space limits on the catalog, and pruning incomplete files."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from catalog.models import CatalogFile
from catalog.services import prune_incomplete_files
from core.errors import Invalid
from indexer.space import catalog_full, forget_cached_sizes
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.reports import report, store

pytestmark = pytest.mark.django_db


class TestCatalogFull:
    def test_no_limit_means_never_full(self, settings):
        settings.CATALOG_MAX_BYTES = 0
        assert catalog_full() is None

    def test_a_catalog_over_its_limit_pauses_range_leases(self, node_client, settings):
        settings.CATALOG_MAX_BYTES = 1024
        SeedRangeFactory()
        body = node_client().post("/api/v1/ranges/lease").json()
        assert body["lease"] is None
        assert "CATALOG_MAX_BYTES" in body["paused"]
        assert body["retry_after"] > 0

    def test_both_limits_show_in_the_paused_reason_and_the_status(self, node_client, settings):
        settings.CATALOG_MAX_BYTES = 1024
        settings.DB_MAX_BYTES = 1024
        client = node_client()
        paused = client.post("/api/v1/ranges/lease").json()["paused"]
        assert "DB_MAX_BYTES" in paused and "CATALOG_MAX_BYTES" in paused
        status = client.get("/api/v1/status").json()
        assert status["paused"] == paused
        assert "CATALOG_MAX_BYTES" in status["catalog_full"]

    def test_a_catalog_under_its_limit_leases(self, node_client, settings):
        settings.CATALOG_MAX_BYTES = 10 * 2**30
        SeedRangeFactory()
        body = node_client().post("/api/v1/ranges/lease").json()
        assert body["lease"] is not None
        assert body["paused"] is None
        assert node_client().get("/api/v1/status").json()["catalog_full"] is None

    def test_the_size_is_measured_at_most_every_few_seconds(
        self, settings, django_assert_num_queries
    ):
        settings.CATALOG_MAX_BYTES = 1024
        forget_cached_sizes()
        with django_assert_num_queries(1):
            assert catalog_full() is not None
            assert catalog_full() is not None

    def test_seed_status_prints_it(self, settings):
        settings.CATALOG_MAX_BYTES = 1024
        out = StringIO()
        call_command("seed_status", stdout=out)
        assert "Catalog full" in out.getvalue()


def age(name, hours):
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE catalog_file SET updated_at = now() - make_interval(hours => %s)"
            " WHERE name = %s",
            [hours, name],
        )


class TestPrune:
    def test_prune_deletes_old_incomplete_files_in_batches(self):
        group = GroupFactory()
        for i in range(5):
            store(group, report(f"stale{i}.rar", [1], 2))
            age(f"stale{i}.rar", 48)
        store(group, report("fresh.rar", [1], 2))
        store(group, report("done.rar", [1, 2], 2))
        age("done.rar", 48)
        out, err = StringIO(), StringIO()
        call_command(
            "prune_catalog",
            "--incomplete-older-than",
            "24",
            "--batch-size",
            "2",
            stdout=out,
            stderr=err,
        )
        text = out.getvalue()
        # Not a terminal: the first step and the last are printed as lines.
        assert err.getvalue().splitlines() == [
            "2 files deleted batch 1",
            "5 files deleted batch 3",
        ]
        assert "5 incomplete file(s) deleted (5 segments" in text
        assert sorted(CatalogFile.objects.values_list("name", flat=True)) == [
            "done.rar",
            "fresh.rar",
        ]

    def test_a_file_that_keeps_growing_is_kept(self):
        group = GroupFactory()
        store(group, report("slow.rar", [1], 3))
        age("slow.rar", 48)
        store(group, report("slow.rar", [2], 3))  # touched again now
        call_command("prune_catalog", "--incomplete-older-than", "24", stdout=StringIO())
        assert CatalogFile.objects.filter(name="slow.rar").exists()

    @pytest.mark.parametrize(
        "args",
        [
            ["--incomplete-older-than", "0"],
            ["--incomplete-older-than", "x"],
            ["--incomplete-older-than", "nan"],
            ["--incomplete-older-than", "inf"],
            ["--incomplete-older-than", "5", "--pause", "nan"],
            ["--incomplete-older-than", "5", "--batch-size", "0"],
            [],
        ],
    )
    def test_bad_options_are_refused(self, args):
        with pytest.raises(CommandError):
            call_command("prune_catalog", *args, stdout=StringIO(), stderr=StringIO())


@pytest.mark.parametrize("hours", [0, -1, float("nan"), float("inf")])
def test_the_prune_service_refuses_hours_that_are_not_a_positive_number(hours):
    with pytest.raises(Invalid, match="older_than_hours"):
        prune_incomplete_files(hours)
