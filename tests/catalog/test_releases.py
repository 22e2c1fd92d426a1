"""Releases assembled from catalog files as batches arrive (same transaction, triggers)."""

from __future__ import annotations

import random
import threading
from dataclasses import replace
from functools import partial
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections, transaction

from catalog.models import CatalogFile, Release
from catalog.releases import release_identity, release_name
from catalog.rulesets import current_rules
from catalog.services import (
    delete_files,
    prune_incomplete_files,
    publish_rules,
    store_files,
)
from core.errors import Invalid
from tests.support.factories import GroupFactory
from tests.support.reports import STEM, release_files, report
from tests.support.threads import run_threads

pytestmark = pytest.mark.django_db

DAY = 86_400


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
    assert release.files_seen == 5  # a file in two groups counts once


def test_files_of_one_key_posted_days_apart_are_two_releases():
    group = GroupFactory()
    files = release_files()
    store(group, *files[:2])
    later = [replace(f, date=f.date + 5 * DAY) for f in files[2:]]
    store(group, *later)
    assert sorted(Release.objects.values_list("files_seen", flat=True)) == [2, 3]
    # Within a day of a release's window, a file joins it (the window widens).
    volume = report(f"{STEM}.vol01+02.par2", [1], 1, index=4, count=5, date=1_700_000_000 + 6 * DAY)
    store(group, volume)
    assert sorted(Release.objects.values_list("files_seen", flat=True)) == [2, 4]


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


def test_publishing_category_rules_and_recategorizing(capsys):
    group = GroupFactory(name="alt.binaries.misc")
    store(group, *release_files())
    store(group, *release_files(stem="Some.Album-2024-FLAC", poster="other <o@p.q>"))
    assert sorted(Release.objects.values_list("category", flat=True)) == [3040, 5040]
    rules = current_rules().to_dict()
    rules.pop("version")
    published = publish_rules(rules, categories=[{"category": 2040, "name": ["(?i)show"]}])
    assert published.categories == [{"category": 2040, "name": ["(?i)show"]}]
    out = StringIO()
    call_command("recategorize", "--batch-size", "1", stdout=out)
    assert "2 releases recategorized" in out.getvalue()
    # The rule overrides the show's category; the album keeps the one its name gives.
    assert sorted(Release.objects.values_list("category", flat=True)) == [2040, 3040]
    assert set(Release.objects.values_list("category_version", flat=True)) == {published.version}
    # Resumable: nothing is left to do, and a release decided already is not redone.
    call_command("recategorize", stdout=out)
    assert "0 releases recategorized" in out.getvalue()


def test_publishing_subject_rules_keeps_the_category_rules():
    custom = [{"category": 7020, "name": ["(?i)book"]}]
    rules = current_rules().to_dict()
    rules.pop("version")
    publish_rules(rules, categories=custom)
    assert publish_rules(rules).categories == custom


def test_bad_category_rules_are_refused():
    rules = current_rules().to_dict()
    rules.pop("version")
    with pytest.raises(Invalid, match="categories"):
        publish_rules(rules, categories=[{"category": 2040, "name": ["(?=x)"]}])


@pytest.mark.django_db(transaction=True)
def test_batches_creating_the_same_releases_at_once_make_each_one_once():
    group = GroupFactory()
    stems = [f"Concurrent.{i}.1080p.x264-GRP" for i in range(20)]
    sets = [release_files(stem) for stem in stems]
    # Each batch brings a half of every release, in opposite orders.
    first = [f for files in sets for f in files[:3]]
    second = [f for files in reversed(sets) for f in files[3:]]

    def store_in_one_transaction(batch):
        with transaction.atomic():
            return store_files(group.id, None, [], batch)

    run_threads([partial(store_in_one_transaction, b) for b in (first, second)])
    assert Release.objects.count() == 20
    assert set(Release.objects.values_list("files_seen", "segments_present")) == {(5, 10)}


@pytest.mark.django_db(transaction=True)
def test_a_batch_creating_releases_also_locks_the_existing_ones_it_merges_into():
    # The statement that creates the new releases locks the batch's existing
    # ones (here: a replay of an old release, so no file write locks it).
    group = GroupFactory()
    old = release_files("Old.Set.2019.1080p.x264-GRP")
    store(group, *old)
    existing = Release.objects.get()
    locked_elsewhere: list[bool] = []

    def try_to_lock():
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    "SELECT id FROM catalog_release WHERE id = %s FOR UPDATE SKIP LOCKED",
                    [existing.id],
                )
                locked_elsewhere.append(cursor.fetchone() is None)
        finally:
            connections.close_all()

    with transaction.atomic():
        new = release_files("New.Set.2020.720p.x264-GRP")
        store(group, *old, *new)
        other = threading.Thread(target=try_to_lock, daemon=True)
        other.start()
        other.join(30)
    assert locked_elsewhere == [True]
    assert Release.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_pruning_skips_files_whose_release_a_batch_holds_instead_of_waiting(backdate_files):
    group = GroupFactory()
    files = release_files()
    store(group, *[replace(f, segments=f.segments[:1]) for f in files])
    backdate_files(hours=48)
    release = Release.objects.get()
    held, done = threading.Event(), threading.Event()

    def hold_the_release():
        try:
            with transaction.atomic():
                list(Release.objects.select_for_update().filter(id=release.id))
                held.set()
                done.wait(30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_release, daemon=True)
    holder.start()
    try:
        assert held.wait(30)
        assert prune_incomplete_files(24).files == 0  # returns at once, nothing taken
    finally:
        done.set()
        holder.join(30)
    assert prune_incomplete_files(24).files == 5
    assert not Release.objects.exists()


@pytest.mark.parametrize(
    ("file_name", "name"),
    [
        ("Movie.2019.1080p.BluRay.x264-GRP.part01.rar", "Movie.2019.1080p.BluRay.x264-GRP"),
        ("Movie.2019.1080p.BluRay.x264-GRP.part117.rar", "Movie.2019.1080p.BluRay.x264-GRP"),
        ("Movie.2019.1080p.BluRay.x264-GRP.rar", "Movie.2019.1080p.BluRay.x264-GRP"),
        ("Movie.2019.1080p.BluRay.x264-GRP.r00", "Movie.2019.1080p.BluRay.x264-GRP"),
        ("Movie.2019.1080p.BluRay.x264-GRP.vol03+04.par2", "Movie.2019.1080p.BluRay.x264-GRP"),
        ("Movie.2019.1080p.BluRay.x264-GRP.par2", "Movie.2019.1080p.BluRay.x264-GRP"),
        ("Movie.2019.1080p.BluRay.x264-GRP.nfo", "Movie.2019.1080p.BluRay.x264-GRP"),
        ("Movie.2019.1080p.BluRay.x264-GRP.sfv", "Movie.2019.1080p.BluRay.x264-GRP"),
        ("Album-2024-FLAC.7z.001", "Album-2024-FLAC"),
        ("Album-2024-FLAC.7z", "Album-2024-FLAC"),
        ("Show.S01E02.mkv.vol00+01.par2", "Show.S01E02.mkv"),
    ],
)
def test_a_release_is_named_by_its_files_stem_without_part_and_volume_suffixes(file_name, name):
    assert release_name(file_name) == name


def test_every_file_of_a_rar_set_shares_the_release_key():
    names = ["x.part01.rar", "x.part02.rar", "x.vol00+01.par2", "x.par2", "x.nfo", "x.sfv"]
    assert len({release_identity("p", n, 6) for n in names}) == 1
    assert release_identity("p", "x.part01.rar", 6) != release_identity("q", "x.part01.rar", 6)
    assert release_identity("p", "x.part01.rar", 6) != release_identity("p", "x.part01.rar", 7)


def test_files_stored_before_releases_join_one_when_a_batch_adds_to_them():
    group = GroupFactory()
    files = release_files()
    store(group, *[replace(f, segments=f.segments[:1]) for f in files])
    with connection.cursor() as cursor:  # as migration 0011 found them: no release
        cursor.execute("UPDATE catalog_file SET release_id = NULL")
        cursor.execute("DELETE FROM catalog_release")
    store(group, *[replace(f, segments=f.segments[:1]) for f in files])  # a replay
    assert not Release.objects.exists()  # the release it made was joined by nothing
    store(group, *[replace(f, segments=f.segments[1:]) for f in files])
    release = Release.objects.get()
    assert (release.files_seen, release.segments_present, release.segments_expected) == (5, 10, 10)


@pytest.mark.parametrize(
    "command, args",
    [
        ("recategorize", ["--batch-size", "0"]),
        ("recategorize", ["--batch-size", "-5"]),
        ("recategorize", ["--rule-version", "0"]),
        ("recount_releases", ["--batch-size", "0"]),
        ("recount_releases", ["--after", "-1"]),
        ("parse_release_names", ["--batch-size", "x"]),
        ("parse_release_names", ["--after", "-3"]),
    ],
)
def test_the_release_batch_commands_refuse_options_that_make_no_sense(command, args):
    """A batch size under 1 or a negative resume point is an operator's slip, said as such."""
    with pytest.raises(CommandError, match="invalid"):
        call_command(command, *args, stdout=StringIO(), stderr=StringIO())
