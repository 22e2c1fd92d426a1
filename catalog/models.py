"""Catalog files and versioned rule sets.

A catalog file holds its segments compactly in one row: parallel arrays
sorted by part number (`parts`, `articles`, `sizes`, `message_ids`), never a
row per segment (docs/catalog.md explains the choice). The columns the lists
show (`segments`, `bytes`, `complete`) are kept beside the arrays so a list
never reads the arrays. `GroupCatalogSummary` holds each group's totals, kept
by triggers on catalog_file, so nothing that shows them counts the files.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import F, Func
from django.db.models.functions import Now

from core import columns


class RuleSetVersion(models.Model):
    """One published rule set. Rows are only ever added: an old version never changes."""

    version = columns.IntegerField(unique=True)
    # RuleSet.to_dict() without "version" (the column is the version).
    rules = models.JSONField()
    # The operator's category rules of this version (usenet.categories),
    # overrides of the category a release's parsed name gives; NULL: none
    # (copies of the retired default rules are no overrides either:
    # catalog.rulesets.category_rules). Apart from `rules`: nodes never need them.
    categories = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=150, blank=True, default="")
    note = models.TextField(blank=True, default="")

    class Meta:
        db_table = "rule_set_version"
        ordering = ["-version"]
        verbose_name = "rule set version"

    def __str__(self) -> str:
        return f"rule set v{self.version}"


class CatalogFile(models.Model):
    group = models.ForeignKey(
        "indexer.Group", on_delete=models.CASCADE, related_name="catalog_files", db_index=False
    )
    # 16-byte identity: RuleSet.identify over (group, poster, key subject, total).
    key = models.BinaryField(max_length=16)
    # The files of one post ("[01/12] name.part01.rar" ... "[12/12] name.par2")
    # share it; NULL when the subject has no file counter.
    release_key = models.BinaryField(max_length=16, null=True, blank=True)
    # The release this file belongs to, set by the batch's own INSERT (never
    # by a later UPDATE). No database constraint: its check would cost a probe
    # and a row lock per file; the release triggers keep both sides right.
    release = models.ForeignKey(
        "Release",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        null=True,
        blank=True,
        related_name="files",
    )
    rule_version = columns.IntegerField()
    subject = models.TextField()
    poster = models.TextField()
    name = models.TextField()
    file_index = columns.IntegerField(null=True, blank=True)
    file_count = columns.IntegerField(null=True, blank=True)
    total = columns.IntegerField()
    date = models.DateTimeField()
    parts = ArrayField(models.IntegerField())
    articles = ArrayField(models.BigIntegerField())
    sizes = ArrayField(models.IntegerField())
    message_ids = ArrayField(models.TextField())
    # Message-ids reported for a part that already held another one: the
    # first stays, these are remembered so a replay counts nothing twice.
    conflict_ids = ArrayField(models.TextField(), default=list, blank=True)
    segments = columns.IntegerField()
    bytes = columns.BigIntegerField()
    complete = models.BooleanField()
    conflicts = columns.IntegerField(default=0)
    created_at = models.DateTimeField(db_default=Now())
    # Moves whenever a batch adds something: retention reads it.
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "catalog_file"
        ordering = ["-id"]
        verbose_name = "catalog file"
        constraints = [
            models.UniqueConstraint(fields=["group", "key"], name="catalog_file_group_key"),
        ]
        indexes = [
            # Lists of one group, newest first.
            models.Index(fields=["group", "-id"], name="catalog_file_group_id_idx"),
            # Retention: incomplete files nobody added to for a while.
            models.Index(
                fields=["updated_at"],
                condition=models.Q(complete=False),
                name="catalog_file_incomplete_idx",
            ),
            models.Index(
                fields=["release_key"],
                condition=models.Q(release_key__isnull=False),
                name="catalog_file_release_idx",
            ),
            # A release's files (its page, its NZB, the recount after pruning),
            # and the copies of one file in other groups (the release
            # triggers count a cross-posted file once). The name's hash: a
            # name is too long for an index entry.
            models.Index(
                F("release"),
                Func(F("name"), function="hashtext", output_field=models.IntegerField()),
                condition=models.Q(release__isnull=False),
                name="catalog_file_release_name_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def segment_rows(self) -> list[tuple[int, int, str, int]]:
        """(part, article, message-id, bytes) in part order."""
        return list(zip(self.parts, self.articles, self.message_ids, self.sizes, strict=True))


class Release(models.Model):
    """One posting of a set of files (a rar set, its par2 volumes, its nfo).

    Kept current by the batch path: `store_files` finds or creates the
    release of each file before the merge (so the file's INSERT carries
    `release_id`), and statement triggers on catalog_file add the merged
    files' deltas in the same transaction, and recount after a deletion
    (sql/releases.sql, docs/catalog.md "Releases").
    """

    # BLAKE2b over (poster, name stem, file count): the catalog's release key
    # without the group, so a cross-posted release is one release.
    key = models.BinaryField(max_length=16)
    name = models.TextField()
    poster = models.TextField()
    # Earliest and latest post date of its files: the posting window. A file
    # joins a release of its key whose window, widened by a day on each side,
    # holds its date.
    posted = models.DateTimeField()
    last_posted = models.DateTimeField()
    size = columns.BigIntegerField(default=0)
    files_expected = columns.IntegerField(null=True, blank=True)
    files_seen = columns.IntegerField(default=0)
    segments_present = columns.BigIntegerField(default=0)
    segments_expected = columns.BigIntegerField(default=0)
    has_par2 = models.BooleanField(default=False)
    has_nfo = models.BooleanField(default=False)
    # A newznab category id (usenet.categories).
    category = columns.IntegerField()
    # The rule set version the category was decided under (recategorize reads
    # the table in id order for the older ones: no index, a rare full pass).
    category_version = columns.IntegerField()
    groups = ArrayField(models.TextField(), default=list)
    created_at = models.DateTimeField(db_default=Now())
    updated_at = models.DateTimeField(db_default=Now())

    # The fields of its name (usenet.release_names.parse_release_name), kept
    # with the name by the batch path; `fields_version` is the parser's
    # FIELDS_VERSION they were read under (0: never), so
    # `manage.py parse_release_names` knows which to read again. Columns with
    # constant defaults: adding them rewrote nothing. Absolute episode
    # numbers are smallint like the others: the parser reads none above 9999.
    kind = models.TextField(default="other", db_default="other")
    title_key = models.TextField(default="", db_default="", blank=True)
    year = columns.SmallIntegerField(null=True, blank=True)
    seasons = ArrayField(columns.SmallIntegerField(), default=list, db_default=[], blank=True)
    episodes = ArrayField(columns.SmallIntegerField(), default=list, db_default=[], blank=True)
    absolute_episodes = ArrayField(
        columns.SmallIntegerField(), default=list, db_default=[], blank=True
    )
    air_date = models.DateField(null=True, blank=True)
    full_season = models.BooleanField(default=False, db_default=False)
    resolution = columns.SmallIntegerField(null=True, blank=True)
    # NULL: the name does not say (the contract the search is written to).
    source = models.TextField(null=True, blank=True)  # noqa: DJ001
    codec = models.TextField(null=True, blank=True)  # noqa: DJ001
    release_group = models.TextField(null=True, blank=True)  # noqa: DJ001
    proper = models.BooleanField(default=False, db_default=False)
    repack = models.BooleanField(default=False, db_default=False)
    fields_version = columns.SmallIntegerField(default=0, db_default=0)
    # Served to search and RSS by default: complete (set by the triggers in
    # the batch that completes it) or settled (quiet for
    # RELEASE_SETTLE_MINUTES above RELEASE_MIN_COMPLETION, set by the upkeep).
    listed = models.BooleanField(default=False, db_default=False)
    # False on the releases stored before migration 0005 until the upkeep
    # counts them again (catalog.release_backfill); meanwhile search serves
    # one whose stored totals are complete (catalog_release_served).
    counted = models.BooleanField(default=True, db_default=True)

    # What inspection found (issue 26; catalog.inspection, docs/inspection.md
    # "Which name wins"). `posted_name`: the poster's name, kept once the
    # release is renamed (NULL: never renamed); a later inspection never
    # changes it. `passworded`: a password is needed to unpack it;
    # `encrypted`: its archive's headers are encrypted (names unreadable).
    posted_name = models.TextField(null=True, blank=True)  # noqa: DJ001
    passworded = models.BooleanField(default=False, db_default=False)
    encrypted = models.BooleanField(default=False, db_default=False)
    imdb_id = models.TextField(null=True, blank=True)  # noqa: DJ001  ("tt0111161")
    tvdb_id = columns.IntegerField(null=True, blank=True)
    inspected_at = models.DateTimeField(null=True, blank=True)
    # The summary the admin shows: the rule that named it, why, each result.
    inspection = models.JSONField(null=True, blank=True)
    # {posted file name: real file name}: the NZB's <meta type="x-real-name">.
    real_names = models.JSONField(null=True, blank=True)

    class Meta:
        db_table = "catalog_release"
        ordering = ["-posted", "-id"]
        verbose_name = "release"
        permissions = [("reinspect_release", "Can ask for a release to be inspected again")]
        indexes = [
            # Finding a file's release: its key, then the window.
            models.Index(fields=["key", "posted"], name="catalog_release_key_idx"),
            # Newest first, keyset pagination.
            models.Index(fields=["-posted", "-id"], name="catalog_release_posted_idx"),
            models.Index(fields=["category", "-posted", "-id"], name="catalog_release_cat_idx"),
            GinIndex(fields=["groups"], name="catalog_release_groups_idx"),
            # The releases left to count again after the upgrade (the upkeep's next batch).
            models.Index(
                fields=["id"],
                condition=models.Q(counted=False),
                name="catalog_release_uncounted_idx",
            ),
            # t=movie&imdbid= and t=tvsearch&tvdbid= (and caps: does any release have one).
            models.Index(
                fields=["imdb_id", "-posted", "-id"],
                condition=models.Q(imdb_id__isnull=False),
                name="catalog_release_imdb_idx",
            ),
            models.Index(
                fields=["tvdb_id", "-posted", "-id"],
                condition=models.Q(tvdb_id__isnull=False),
                name="catalog_release_tvdb_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def completion(self) -> float:
        """Segments present over segments expected, 0..1."""
        if not self.segments_expected:
            return 0.0
        return min(1.0, self.segments_present / self.segments_expected)


class ReleaseSettling(models.Model):
    """An unlisted release a batch has touched, waiting to be looked at once quiet.

    The release triggers queue each release a batch leaves unlisted (or move
    its `touched_at`); the upkeep (`settle_releases`) takes the rows quiet for
    RELEASE_SETTLE_MINUTES, lists the releases complete enough and drops the
    rows. A queue beside the release, not an index on it: an index on a column
    every batch changes would make the release's updates non-HOT.
    """

    release = models.OneToOneField(
        Release,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        primary_key=True,
        related_name="+",
    )
    touched_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "catalog_release_settling"
        verbose_name = "release waiting to settle"

    def __str__(self) -> str:
        return f"release {self.release_id}, touched {self.touched_at}"


# How many rows a group's summary is striped over (SUMMARY_SLOTS in
# sql/migrations/catalog_summary.sql, which the triggers use; a test checks they agree).
SUMMARY_SLOTS = 8


class GroupCatalogSummary(models.Model):
    """A group's catalog totals, kept exact by statement triggers on catalog_file.

    Striped over up to SUMMARY_SLOTS rows per group: each transaction that
    writes catalog files adds its deltas to one slot (chosen by its
    transaction id), so batches of one group committing at once do not wait
    on one row. A group's totals are the sums of its slots (`newest`: their
    maximum). Triggers and locking: migration 0007 and docs/catalog.md.
    """

    # The database cascades a group's deletion (an FK added in the migration);
    # Django must not collect these rows itself.
    group = models.ForeignKey(
        "indexer.Group",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    slot = columns.SmallIntegerField()
    files = columns.BigIntegerField(default=0)
    complete = columns.BigIntegerField(default=0)
    segments = columns.BigIntegerField(default=0)
    bytes = columns.BigIntegerField(default=0)
    conflicts = columns.BigIntegerField(default=0)
    # The newest post date (catalog_file.date) of the group: the maximum over
    # its slots is exact; a slot alone is not.
    newest = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "group_catalog_summary"
        constraints = [
            models.UniqueConstraint(fields=["group", "slot"], name="group_catalog_summary_key"),
        ]

    def __str__(self) -> str:
        return f"group {self.group_id}, slot {self.slot}: {self.files} files"


class ReleaseBackfill(models.Model):
    """Where the upkeep's backfill of the releases' name fields is (catalog.release_backfill).

    One row, `fields`: the FIELDS_VERSION it reads for, the last release id
    read, and the highest id to read (the newest release when it began: the
    batch path reads every later one under that version already).
    """

    name = models.TextField(primary_key=True)
    version = columns.SmallIntegerField()
    after = models.BigIntegerField()
    upto = models.BigIntegerField()

    class Meta:
        db_table = "catalog_release_backfill"
        verbose_name = "release backfill position"

    def __str__(self) -> str:
        return f"{self.name}: version {self.version}, after {self.after} up to {self.upto}"
