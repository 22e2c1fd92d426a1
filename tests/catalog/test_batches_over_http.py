"""Files reach the catalog through the range protocol's batch endpoint."""

from __future__ import annotations

from dataclasses import replace

import pytest

from catalog.models import CatalogFile, Release
from catalog.services import publish_rules
from seeding.models import SeedRange
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.reports import as_json, catalog_snapshot, report
from usenet.rules import RuleSet

pytestmark = pytest.mark.django_db


def batch(node, lease, files=(), fragments=(), next_id=None, headers=10):
    body = {
        "epoch": lease["epoch"],
        "next": next_id if next_id is not None else lease["start"] + 100,
        "headers": headers,
        "files": [as_json(f) for f in files],
        "fragments": [as_json(f) for f in fragments],
    }
    response = node.post(f"/api/v1/ranges/{lease['id']}/batch", body)
    assert response.status_code == 200, response.content
    return response.json()


def test_a_file_is_stitched_from_two_ranges_reported_by_two_nodes(node_client):
    group = GroupFactory()
    SeedRangeFactory(group=group, start_id=1000, end_id=1999)
    SeedRangeFactory(group=group, start_id=2000, end_id=2999)
    first, second = node_client(), node_client()
    lease_a, lease_b = first.lease(), second.lease()
    assert {lease_a["id"], lease_b["id"]} == set(SeedRange.objects.values_list("id", flat=True))
    assert batch(first, lease_a, fragments=[report(parts=[1, 2, 3], total=5)])["stored"] == 1
    assert batch(second, lease_b, fragments=[report(parts=[4, 5], total=5)])["stored"] == 1
    file = CatalogFile.objects.get()
    assert file.group_id == group.id
    assert (file.parts, file.complete) == ([1, 2, 3, 4, 5], True)


def test_a_replayed_batch_leaves_the_catalog_and_the_counters_unchanged(node_client):
    SeedRangeFactory(start_id=1000, end_id=5999)
    node = node_client()
    lease = node.lease()
    files = [report(f"r{i}.rar", [1, 2], total=2) for i in range(5)]
    assert batch(node, lease, files, next_id=1500)["stored"] == 5
    catalog = catalog_snapshot()
    counters = SeedRange.objects.values_list("next_id", "headers", "files").get()
    replay = batch(node, lease, files, next_id=1500)
    assert replay == {"next": 1500, "stored": 0}
    assert catalog_snapshot() == catalog
    assert SeedRange.objects.values_list("next_id", "headers", "files").get() == counters


def test_ranges_record_the_rule_version_they_were_leased_under(node_client):
    SeedRangeFactory()
    SeedRangeFactory()
    node = node_client()
    first = node.lease()
    publish_rules(RuleSet.default().to_dict(), note="same rules, new version")
    second = node.lease()
    versions = dict(SeedRange.objects.values_list("id", "rule_version"))
    assert versions == {first["id"]: 1, second["id"]: 2}


@pytest.mark.slow
def test_the_batch_endpoint_runs_a_fixed_number_of_queries(
    node_client, django_assert_num_queries, settings
):
    settings.RULES_CHECK_SECONDS = 3600  # the rule set stays cached for the test
    SeedRangeFactory(start_id=1000, end_id=5999)
    node = node_client()
    lease = node.lease()
    batch(node, lease, [report("warm.rar")], next_id=1010)  # node last-seen is written once
    small = [report("one.rar", [1, 2], total=2)]
    many = [report(f"m{i}.rar", range(1, 21), total=20) for i in range(200)]
    # No token lookup: it is kept since the first call (TOKEN_CACHE_SECONDS).
    # Savepoint + release, the range update (which reads the group's name too),
    # the merge; and the releases: finding them (and locking them when all
    # exist, or else taking the new keys' locks), then for new ones creating
    # them and locking the existing ones in one statement (docs/catalog.md,
    # "Releases"). Every new release gets a file: none to drop.
    with django_assert_num_queries(6):
        assert batch(node, lease, small, next_id=1020)["stored"] == 1
    with django_assert_num_queries(6):
        assert batch(node, lease, many, fragments=small, next_id=1030)["stored"] == 200
    with django_assert_num_queries(5):  # every release exists: found and locked at once
        assert batch(node, lease, many, next_id=1040)["stored"] == 0


@pytest.mark.parametrize(
    ("field", "length", "limit"), [("subject", 1001, "1000"), ("poster", 501, "500")]
)
def test_a_subject_or_poster_over_its_limit_is_a_400_before_the_rules_read_it(
    node_client, field, length, limit
):
    # The coordinator's bound (usenet/limits.py): the rules never see a longer text.
    SeedRangeFactory(group=GroupFactory())
    node = node_client()
    lease = node.lease()
    item = as_json(report("x.rar", [1], 1))
    item[field] = "-" * (length - 6) + " (1/1)"
    body = {"epoch": lease["epoch"], "next": lease["start"] + 1, "headers": 1, "files": [item]}
    response = node.post(f"/api/v1/ranges/{lease['id']}/batch", {**body, "fragments": []})
    assert response.status_code == 400
    assert f"files[0].{field}" in response.json()["detail"] and limit in response.json()["detail"]
    assert not CatalogFile.objects.exists()


def test_a_release_is_assembled_from_ranges_reported_by_two_nodes_in_any_order(node_client):
    group = GroupFactory(name="alt.binaries.teevee")
    SeedRangeFactory(group=group, start_id=1000, end_id=1999)
    SeedRangeFactory(group=group, start_id=2000, end_id=2999)
    first, second = node_client(), node_client()
    lease_a, lease_b = first.lease(), second.lease()
    stem = "Show.S02E05.720p.HDTV.x264-GRP"
    names = [f"{stem}.part{i:02d}.rar" for i in (1, 2, 3)] + [f"{stem}.par2"]
    files = [
        report(n, [1, 2, 3], total=3, index=i, count=4, date=1_700_000_000 + 60 * i)
        for i, n in enumerate(names, start=1)
    ]
    tails = [replace(f, segments=f.segments[2:]) for f in files]
    heads = [replace(f, segments=f.segments[:2]) for f in files]
    batch(second, lease_b, fragments=tails[::-1])  # the later range first
    batch(first, lease_a, fragments=heads[2:], next_id=lease_a["start"] + 50)
    batch(first, lease_a, fragments=heads[:2], next_id=lease_a["start"] + 100)
    release = Release.objects.get()
    assert release.name == stem
    assert (release.files_expected, release.files_seen) == (4, 4)
    assert (release.segments_present, release.segments_expected) == (12, 12)
    assert release.has_par2 and not release.has_nfo
    assert release.category == 5040
    assert int(release.posted.timestamp()) == 1_700_000_060
    assert set(CatalogFile.objects.values_list("release_id", flat=True)) == {release.id}
