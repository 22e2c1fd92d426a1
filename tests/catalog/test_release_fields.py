"""A release's name fields and its category: stored by the batch path, read again by
`manage.py parse_release_names`, the category decided from the fields with the
rule set's category rules as overrides."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from catalog import release_fields
from catalog.models import Release
from catalog.release_fields import MAX_NUMBERS, read_name
from catalog.retired_categories import RETIRED_DEFAULT_CATEGORY_RULES, is_retired_default
from catalog.rulesets import category_rules, current_rules
from catalog.services import publish_rules, store_files
from tests.support.factories import GroupFactory
from tests.support.reports import STEM, release_files
from usenet.release_names import FIELDS_VERSION, ParsedName

pytestmark = pytest.mark.django_db


def store(group, *reports):
    return store_files(group.id, None, [], list(reports))


def publish_categories(categories):
    rules = current_rules().to_dict()
    rules.pop("version")
    return publish_rules(rules, categories=categories)


def unread():
    """The releases as the migration left them: no fields read, under parser version 0."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE catalog_release SET fields_version = 0, kind = 'other', title_key = '',"
            " seasons = '{}', episodes = '{}', resolution = NULL, source = NULL, codec = NULL,"
            " release_group = NULL, category = 8010"
        )


def test_the_batch_stores_a_new_release_s_name_fields():
    store(GroupFactory(), *release_files())  # Some.Show.S01E02.1080p.WEB.h264-GRP
    release = Release.objects.get()
    assert (release.kind, release.title_key) == ("tv", "some show")
    assert (release.seasons, release.episodes, release.full_season) == ([1], [2], False)
    assert (release.resolution, release.source, release.codec) == (1080, "webdl", "h264")
    assert release.release_group == "GRP"
    assert release.fields_version == FIELDS_VERSION
    assert release.category == 5040


def test_fields_cost_no_statement_per_release():
    """The fields ride in the INSERT that creates the releases: 1 or 20 new, same statements."""
    group = GroupFactory()
    store(group, *release_files("Warm.Up.S01E01.720p-GRP"))  # caches, rule set
    with connection.execute_wrapper(counter := _Counter()):
        store(group, *release_files("One.Show.S01E01.720p-GRP"))
    one = counter.statements
    many = [f for i in range(20) for f in release_files(f"Many.Show.S01E{i + 1:02d}.720p-GRP")]
    with connection.execute_wrapper(counter := _Counter()):
        store(group, *many)
    assert counter.statements == one
    assert Release.objects.filter(kind="tv", title_key="many show").count() == 20


class _Counter:
    def __init__(self):
        self.statements = 0

    def __call__(self, execute, sql, params, many, context):
        self.statements += 1
        return execute(sql, params, many, context)


def test_what_the_parser_gives_is_bounded_to_its_columns(monkeypatch):
    hostile = ParsedName(
        kind="spaceship",
        title_key="x" * 5000,
        year=99999,
        seasons=tuple(range(100)),
        episodes=(1, 40_000, -3),
        resolution=70_000,
    )
    monkeypatch.setattr(release_fields, "parse_release_name", lambda name: hostile)
    fields = read_name("anything")
    assert fields.kind == "other" and len(fields.title_key) == 300
    assert fields.year is None and fields.resolution is None
    assert len(fields.seasons) == MAX_NUMBERS and fields.episodes == (1,)


# --- categories: overrides, then the fields -----------------------------------------


def test_an_operator_rule_overrides_the_category_the_fields_give(monkeypatch):
    monkeypatch.setattr(release_fields, "category_from_fields", lambda *a: 5070)
    publish_categories([{"category": 2040, "name": ["(?i)^Ruled\\."]}])
    group = GroupFactory()
    store(group, *release_files("Ruled.Show.S01E01.1080p-GRP"))
    store(group, *release_files(STEM))
    by_name = dict(Release.objects.values_list("name", "category"))
    assert by_name == {"Ruled.Show.S01E01.1080p-GRP": 2040, STEM: 5070}


def test_stored_copies_of_the_retired_defaults_do_not_override_the_fields(monkeypatch):
    """The form offered the defaults for editing: a rule set published from it holds them."""
    monkeypatch.setattr(release_fields, "category_from_fields", lambda *a: 5070)
    own = {"category": 7020, "name": "(?i)\\.epub"}  # a string: stored as the operator wrote it
    version = publish_categories([*RETIRED_DEFAULT_CATEGORY_RULES, own]).version
    assert [rule.category for rule in category_rules(version).rules] == [7020]
    group = GroupFactory(name="alt.binaries.teevee")  # a group the old rules would read too
    store(group, *release_files(STEM))  # the old rules: 5040 TV/HD
    store(group, *release_files("A.Book.epub"))
    by_name = dict(Release.objects.values_list("name", "category"))
    assert by_name == {STEM: 5070, "A.Book.epub": 7020}


def test_an_edited_default_rule_is_the_operator_s_and_overrides():
    edited = {**RETIRED_DEFAULT_CATEGORY_RULES[0], "category": 5040}
    assert not is_retired_default(edited)
    assert is_retired_default(dict(RETIRED_DEFAULT_CATEGORY_RULES[0]))
    version = publish_categories([edited]).version
    assert [rule.category for rule in category_rules(version).rules] == [5040]


def test_recategorize_decides_from_the_fields_under_the_new_overrides(monkeypatch):
    group = GroupFactory()
    store(group, *release_files(STEM))
    monkeypatch.setattr(release_fields, "category_from_fields", lambda *a: 5070)
    publish_categories([{"category": 2040, "name": ["(?i)nothing-matches-this"]}])
    out = StringIO()
    call_command("recategorize", stdout=out)
    assert "1 releases recategorized" in out.getvalue()
    assert Release.objects.get().category == 5070


# --- the backfill --------------------------------------------------------------------


def test_the_backfill_reads_every_release_once_and_a_second_run_finds_nothing(capsys):
    group = GroupFactory()
    for i in range(3):
        store(group, *release_files(f"Back.Fill.S02E{i + 1:02d}.720p.HDTV.x264-GRP"))
    unread()
    out = StringIO()
    call_command("parse_release_names", "--batch-size", "2", stdout=out)
    assert "3 releases read under parser" in out.getvalue()
    rows = Release.objects.values_list(
        "fields_version", "kind", "seasons", "resolution", "category"
    )
    assert {(v, k, tuple(s), r, c) for v, k, s, r, c in rows} == {
        (FIELDS_VERSION, "tv", (2,), 720, 5040)
    }
    assert "3/3 releases" in capsys.readouterr().err  # the progress bar
    call_command("parse_release_names", stdout=out)
    assert "0 releases read under parser" in out.getvalue()


def test_a_killed_backfill_resumes_where_it_stopped():
    group = GroupFactory()
    for i in range(4):
        store(group, *release_files(f"Kill.Me.S01E{i + 1:02d}.1080p.WEB-GRP"))
    unread()
    first_id = Release.objects.order_by("id").values_list("id", flat=True)[0]

    def killed(summary):
        raise KeyboardInterrupt  # after the first batch has committed

    with pytest.raises(KeyboardInterrupt):
        release_fields.parse_release_names(batch_size=1, progress=killed)
    done = set(Release.objects.filter(fields_version=FIELDS_VERSION).values_list("id", flat=True))
    assert done == {first_id}
    summary = release_fields.parse_release_names(batch_size=3)  # from the start: skips it
    assert (summary.total, summary.releases) == (3, 3)
    assert not Release.objects.filter(fields_version__lt=FIELDS_VERSION).exists()
    assert set(Release.objects.values_list("kind", flat=True)) == {"tv"}


def test_a_resumed_backfill_can_start_past_the_ids_it_read():
    group = GroupFactory()
    for i in range(3):
        store(group, *release_files(f"After.This.S01E{i + 1:02d}.1080p.WEB-GRP"))
    unread()
    first, *rest = Release.objects.order_by("id").values_list("id", flat=True)
    out = StringIO()
    call_command("parse_release_names", "--after", str(first), stdout=out)
    assert "2 releases read under parser" in out.getvalue()
    read = set(Release.objects.filter(fields_version=FIELDS_VERSION).values_list("id", flat=True))
    assert read == set(rest)
