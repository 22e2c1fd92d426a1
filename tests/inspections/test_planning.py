"""Planning: which releases get an inspection and which articles it names (real PostgreSQL)."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import override_settings

from catalog.models import Release
from inspection import MAX_LEASE_MESSAGE_IDS, MAX_NFO_SEGMENTS
from inspections import planning
from inspections.models import Inspection, InspectionStatus
from inspections.planning import FileRow, choose_articles
from seed_node.inspecting import InspectLease
from tests.inspections.conftest import obfuscated_files
from tests.support.releases import store_fragments
from tests.support.reports import msgid, report

pytestmark = pytest.mark.django_db


def test_an_obfuscated_release_names_its_par2_index_nfo_and_first_volume(planned):
    row = planned("a8f7d6e5c4b3")
    assert row.status == InspectionStatus.QUEUED
    by_role = {a["role"]: a for a in row.articles}
    assert list(by_role) == ["par2", "nfo", "archive"]
    # The smallest .par2 (the index, not the volume), its first segment.
    assert by_role["par2"] == {
        "role": "par2",
        "message_ids": [msgid("a8f7d6e5c4b3.par2", 1)],
        "bytes": 4_001,
        "name": "a8f7d6e5c4b3.par2",
    }
    # The nfo's segments in order, up to INSPECT_NFO_MAX_BYTES (65536): two of 30 kB.
    assert by_role["nfo"]["message_ids"] == [msgid("a8f7d6e5c4b3.nfo", p) for p in (1, 2)]
    assert by_role["nfo"]["bytes"] == 30_001 + 30_002
    assert by_role["archive"]["message_ids"] == [msgid("a8f7d6e5c4b3.part01.rar", 1)]
    assert by_role["archive"]["name"] == "a8f7d6e5c4b3.part01.rar"
    assert row.group.name == "alt.binaries.inspect"


@override_settings(INSPECT_NFO_MAX_BYTES=1)
def test_an_nfo_over_the_bound_still_names_its_first_segment(planned):
    nfo = next(a for a in planned().articles if a["role"] == "nfo")
    assert nfo["message_ids"] == [msgid("a8f7d6e5c4b3.nfo", 1)]


def test_a_named_release_is_left_alone_unless_all_are_inspected(store):
    named = store("Some.Show.S01E02.1080p.WEB.h264-GRP")
    obfuscated = store("q8w7e6x5z4", date=1_700_001_000)
    planning.plan_all()
    assert list(Inspection.objects.values_list("release_id", flat=True)) == [obfuscated.id]
    with override_settings(INSPECT_RELEASES="all"):
        result = planning.plan_all()  # a new mode reads every release again
    assert result.planned == 1
    assert set(Inspection.objects.values_list("release_id", flat=True)) == {
        named.id,
        obfuscated.id,
    }


def test_other_inspects_category_other_and_off_plans_nothing(store):
    named = store("Some.Show.S01E02.1080p.WEB.h264-GRP")
    Release.objects.filter(pk=named.pk).update(category=8010)
    with override_settings(INSPECT_RELEASES="off"):
        assert planning.plan_all().planned == 0
    assert not Inspection.objects.exists()
    with override_settings(INSPECT_RELEASES="other"):
        planning.plan_all()
    assert list(Inspection.objects.values_list("release_id", flat=True)) == [named.id]


def test_planning_is_idempotent(store):
    store()
    first = planning.plan_all()
    assert first.planned == 1
    call_command("plan_inspections", "--from-start", verbosity=0)
    assert planning.plan_all().planned == 0
    assert Inspection.objects.count() == 1


def test_a_release_whose_files_change_before_inspection_gets_its_articles_again(group, store):
    stem = "b1c2d3e4f5a6"
    store_fragments(group, [report(f"{stem}.part01.rar", index=1, count=3)])
    planning.plan_all()
    row = Inspection.objects.get()
    assert [a["role"] for a in row.articles] == ["archive"]
    store_fragments(group, [report(f"{stem}.par2", parts=[1], total=1, index=3, count=3)])
    assert planning.plan_step().refreshed == 1
    row.refresh_from_db()
    assert [a["role"] for a in row.articles] == ["par2", "archive"]
    assert planning.plan_step().refreshed == 0  # nothing changed since


def test_a_leased_row_keeps_the_articles_it_was_handed(group, store, node_client):
    stem = "b1c2d3e4f5a6"
    store_fragments(group, [report(f"{stem}.part01.rar", index=1, count=3)])
    planning.plan_all()
    assert node_client().post("/api/v1/inspections/lease").json()["lease"] is not None
    store_fragments(group, [report(f"{stem}.par2", parts=[1], total=1, index=3, count=3)])
    assert planning.plan_step().refreshed == 0
    assert [a["role"] for a in Inspection.objects.get().articles] == ["archive"]


def test_dry_run_counts_and_plans_nothing(store, capsys):
    store()
    call_command("plan_inspections", "--dry-run")
    assert "1 of 1 releases read need inspection" in capsys.readouterr().out
    assert not Inspection.objects.exists()


def _file(name: str, size: int = 1000, first: str | None = "<x@y>") -> FileRow:
    return FileRow(1, name, size, first, size)


@pytest.mark.parametrize(
    ("names", "first"),
    [
        (["x.r00", "x.r01", "x.rar"], "x.rar"),  # old style: the .rar is the first volume
        (["x.part02.rar", "x.part01.rar", "x.part10.rar"], "x.part01.rar"),
        (["x.part002.rar", "x.part001.rar"], "x.part001.rar"),
        (["x.7z.002", "x.7z.001"], "x.7z.001"),
        (["x.zip", "x.7z"], "x.7z"),
        (["x.7z", "x.part01.rar"], "x.part01.rar"),
    ],
)
def test_the_first_archive_volume(names, first):
    articles, _ = choose_articles([_file(n) for n in names], False, 65536)
    assert [a["name"] for a in articles if a["role"] == "archive"] == [first]


def test_files_without_any_extension_read_the_largest_of_an_obfuscated_release():
    files = [_file("k3j9xq2m8zt4", 10), _file("p0o9i8u7y6t5", 900), _file("z1x2c3v4b5n6", 50)]
    articles, _ = choose_articles(files, True, 65536)
    assert [(a["role"], a["name"]) for a in articles] == [("archive", "p0o9i8u7y6t5")]
    assert choose_articles(files, False, 65536) == ([], None)


def test_a_file_without_its_first_segment_is_not_named():
    articles, group = choose_articles([_file("x.par2", first=None)], True, 65536)
    assert (articles, group) == ([], None)


def test_new_releases_then_the_backlog_newest_first(store):
    oldest, middle, newest = (
        store(stem, date=1_700_000_000 + n * 1000)
        for n, stem in enumerate(("a8f7d6e5c4b3", "q8w7e6x5z4y3", "k3j9xq2m8zt4"))
    )
    order = []

    def step() -> None:
        assert planning.plan_step(limit=1).planned == 1
        order.append(Inspection.objects.order_by("-id").first().release_id)

    step()
    step()
    later = store("p0o9i8u7y6t5", date=1_700_900_000)  # comes while the backlog is read
    step()
    step()
    assert planning.plan_step(limit=1).read == 0  # everything read
    assert order == [newest.id, middle.id, later.id, oldest.id]


def test_an_nfo_of_many_tiny_segments_makes_a_lease_the_agent_reads(group, node_client):
    # A hostile poster's nfo: 300 segments of about 500 bytes, well under
    # INSPECT_NFO_MAX_BYTES together. The lease names no more segments than the
    # agent reads, so the par2 and the archive are read too.
    stem = "a8f7d6e5c4b3"
    files = obfuscated_files(stem, 1_700_000_000)
    files[-1] = report(f"{stem}.nfo", parts=range(1, 301), total=300, index=6, count=6, size=500)
    store_fragments(group, files)
    release = Release.objects.get(name=stem)
    planning.plan_all()
    lease = node_client().post("/api/v1/inspections/lease").json()["lease"]
    assert lease["release"] == release.id
    by_role = {a["role"]: a for a in lease["articles"]}
    assert by_role["nfo"]["message_ids"] == [
        msgid(f"{stem}.nfo", p) for p in range(1, MAX_NFO_SEGMENTS + 1)
    ]
    assert sum(len(a["message_ids"]) for a in lease["articles"]) <= MAX_LEASE_MESSAGE_IDS
    read = InspectLease.from_json(lease)  # the agent's own check: no BadLease
    assert [w.role for w in read.articles] == ["par2", "nfo", "archive"]
