"""Releases assembled from catalog files as batches arrive (same transaction, triggers)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from django.db import connection

from indexer.catalog.services import delete_files, prune_incomplete_files, store_files
from indexer.models import CatalogFile, Release
from tests.catalog.reports import report
from tests.factories import GroupFactory

pytestmark = pytest.mark.django_db

DAY = 86_400
STEM = "Some.Show.S01E02.1080p.WEB.h264-GRP"


def release_files(stem: str = STEM, count: int = 5, date: int = 1_700_000_000, **kw):
    """A rar set of count-2 volumes, a par2 and an nfo, two segments each (1/2, 2/2)."""
    names = [f"{stem}.part{i:02d}.rar" for i in range(1, count - 1)]
    names += [f"{stem}.vol00+01.par2", f"{stem}.nfo"]
    return [
        report(name, parts=[1, 2], total=2, index=i, count=count, date=date + i, **kw)
        for i, name in enumerate(names, start=1)
    ]


def halves(files):
    """Each file split in two fragments (part 1, part 2)."""
    out = []
    for f in files:
        out.append(replace(f, segments=f.segments[:1]))
        out.append(replace(f, segments=f.segments[1:], subject=f.subject.replace("(1/2)", "(2/2)")))
    return out


@pytest.fixture
def backdate_files():
    def move(hours):
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE catalog_file SET updated_at = now() - make_interval(hours => %s)", [hours]
            )

    return move


def store(group, *reports):
    return store_files(group.id, None, [], list(reports))


def test_a_release_is_assembled_in_the_batch_that_stores_its_files():
    group = GroupFactory(name="alt.binaries.teevee")
    store(group, *release_files())
    release = Release.objects.get()
    assert release.name == STEM
    assert release.files_expected == 5
    assert release.files_seen == 5
    assert (release.segments_present, release.segments_expected) == (10, 10)
    assert release.completion == 1.0
    assert release.has_par2 and release.has_nfo
    assert release.groups == ["alt.binaries.teevee"]
    assert release.category == 5040
    assert release.size == sum(f.bytes for f in CatalogFile.objects.all())
    assert int(release.posted.timestamp()) == 1_700_000_001
    assert set(CatalogFile.objects.values_list("release_id", flat=True)) == {release.id}


@pytest.mark.parametrize("seed", range(5))
def test_fragments_in_any_order_across_batches_give_the_same_release(seed):
    group = GroupFactory()
    pieces = halves(release_files())
    random.Random(seed).shuffle(pieces)
    cut = random.Random(seed).randrange(1, len(pieces))
    store(group, *pieces[:cut])
    store(group, *pieces[cut:])
    release = Release.objects.get()
    assert (release.files_seen, release.segments_present, release.segments_expected) == (5, 10, 10)
    assert int(release.posted.timestamp()) == 1_700_000_001
    assert release.size == sum(f.bytes for f in CatalogFile.objects.all())


def test_a_partial_release_counts_what_has_arrived():
    group = GroupFactory()
    files = release_files(count=12)
    store(group, *[replace(f, segments=f.segments[:1]) for f in files[:4]])
    release = Release.objects.get()
    assert (release.files_expected, release.files_seen) == (12, 4)
    assert (release.segments_present, release.segments_expected) == (4, 8)
    assert release.completion == 0.5
    assert not release.has_par2


def test_a_cross_posted_release_is_one_release_with_every_group():
    first, second = GroupFactory(name="alt.binaries.b"), GroupFactory(name="alt.binaries.a")
    files = release_files()
    store(first, *files[:3])
    store(second, *files)
    release = Release.objects.get()
    assert release.groups == ["alt.binaries.a", "alt.binaries.b"]
    assert release.files_seen == 8  # one catalog file per group


def test_a_repost_days_later_is_another_release():
    group = GroupFactory()
    store(group, *release_files())
    store(group, *release_files(date=1_700_000_000 + 5 * DAY))
    assert Release.objects.count() == 2


def test_a_replayed_batch_changes_nothing():
    group = GroupFactory()
    files = release_files()
    store(group, *files)
    before = list(Release.objects.values())
    store(group, *files)
    assert list(Release.objects.values()) == before


def test_deleting_files_recounts_their_release_and_drops_an_empty_one():
    group = GroupFactory()
    store(group, *release_files())
    nfo = CatalogFile.objects.get(name__endswith=".nfo")
    delete_files([nfo.id])
    release = Release.objects.get()
    assert (release.files_seen, release.has_nfo, release.has_par2) == (4, False, True)
    delete_files(CatalogFile.objects.values_list("id", flat=True))
    assert not Release.objects.exists()


def test_pruning_incomplete_files_keeps_releases_right(backdate_files):
    group = GroupFactory()
    files = release_files()
    store(group, *files[:2], *[replace(f, segments=f.segments[:1]) for f in files[2:]])
    backdate_files(hours=48)
    summary = prune_incomplete_files(24)
    assert summary.files == 3
    release = Release.objects.get()
    assert (release.files_seen, release.segments_present, release.has_par2) == (2, 4, False)


def test_files_without_a_file_counter_form_no_release():
    group = GroupFactory()
    store(group, report("single.mkv", count=1))
    assert CatalogFile.objects.get().release_id is None
    assert not Release.objects.exists()
