"""The catalog's shapes (docs/api.md, "Catalog"): the File a node reports inside
batches, the file the API lists and shows, and the list's query.

A reported File and a catalog file are two shapes: one carries its segments,
the other counts them and adds what the catalog derived (id, group, name,
bytes, completeness). Each is defined once, here, and reused wherever it occurs.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers
from rest_framework.utils.urls import replace_query_param

from catalog.selectors import MAX_CATEGORY
from catalog.validation import (
    MAX_DATE,
    MAX_MESSAGE_ID,
    MESSAGE_ID,
    FileReport,
    validate_files,
)
from core.api.fields import DecimalNumberField, WholeNumberField
from usenet.groups import group_name_problem
from usenet.limits import MAX_BIGINT, MAX_FILES_PER_BATCH, MAX_POSTER, MAX_SUBJECT
from usenet.numbers import NotANumber, whole_number

MAX_PAGE = 1000
MAX_RELEASE_LIMIT = 500


# Documents the shape only: a batch of hundreds of thousands of segments is
# checked by `validation.validate_files`, not field by field.
class FileReportIn(serializers.Serializer):
    """A File inside a batch, as a node reports it."""

    subject = serializers.CharField(max_length=MAX_SUBJECT)
    poster = serializers.CharField(max_length=MAX_POSTER)
    date = WholeNumberField(help_text="Unix time of the earliest segment.")
    total = WholeNumberField(help_text="Segment count from the subject.")
    segments = serializers.ListField(
        child=serializers.ListField(),
        help_text="[part number, article number, message-id, bytes] per segment.",
    )


class FileColumnsIn(serializers.Serializer):
    """The same files in the columnar form (docs/api.md, "The columnar form"): a list
    per File field with an entry per file, then a list per segment field with every
    file's segments end to end."""

    subject = serializers.ListField(child=serializers.CharField(max_length=MAX_SUBJECT))
    poster = serializers.ListField(child=serializers.CharField(max_length=MAX_POSTER))
    date = serializers.ListField(
        child=WholeNumberField(), help_text="Unix time of each file's earliest segment."
    )
    total = serializers.ListField(
        child=WholeNumberField(), help_text="Each file's segment count from its subject."
    )
    segments = serializers.ListField(
        child=WholeNumberField(), help_text="How many segments of the lists below each file holds."
    )
    part = serializers.ListField(child=WholeNumberField())
    article = serializers.ListField(child=WholeNumberField())
    message_id = serializers.ListField(child=serializers.CharField(max_length=MAX_MESSAGE_ID))
    bytes = serializers.ListField(child=WholeNumberField())


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="FileReports",
        serializers=[FileReportIn(many=True), FileColumnsIn],
        resource_type_field_name=None,
        many=False,  # the list is the first form's own
    )
)
class FileListField(serializers.Field):
    """A batch's `files` or `fragments`: a list of File or its columns, validated whole
    (a 400 names the field)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", list)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[FileReport]:
        return validate_files(data, self.field_name or "files", MAX_FILES_PER_BATCH)

    def to_representation(self, value: Any) -> Any:
        return value


class ListQueryIn(serializers.Serializer):
    """A list's query string: an unknown parameter is an error (a typo must not
    silently widen the list); the `blank_means_any` ones left empty (an empty
    search box) are dropped."""

    blank_means_any: tuple[str, ...] = ("group", "q")

    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {name: ["is not a parameter of this list."] for name in unknown}
            )
        values = dict(super().to_internal_value(data))
        for name in self.blank_means_any:
            if values.get(name) == "":
                del values[name]
        return values


class FileListIn(ListQueryIn):
    group = serializers.CharField(required=False, allow_blank=True, max_length=255)
    complete = serializers.ChoiceField(
        required=False, choices=["true", "false"], help_text="true or false."
    )
    q = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="Part of the file name."
    )
    since = WholeNumberField(
        required=False, min_value=0, max_value=MAX_DATE, help_text="Posted at or after (Unix)."
    )
    message_id = serializers.CharField(
        required=False,
        max_length=MAX_MESSAGE_ID,
        help_text="Files holding this message-id (<part@host>), in every group.",
    )
    page = WholeNumberField(required=False, min_value=1, max_value=MAX_PAGE, default=1)
    after = WholeNumberField(
        required=False,
        min_value=1,
        max_value=2**63 - 1,
        help_text="Keyset: the files after this id in the list's order (the last id seen).",
    )

    def validate_group(self, value: str) -> str:
        problem = group_name_problem(value) if value else None
        if problem is not None:
            raise serializers.ValidationError(problem)
        return value

    def validate_message_id(self, value: str) -> str:
        if not MESSAGE_ID.match(value):
            raise serializers.ValidationError("is not a message-id like <part@host>.")
        return value

    def to_internal_value(self, data: Any) -> Any:
        values = super().to_internal_value(data)
        if "complete" in values:
            values["complete"] = values["complete"] == "true"
        return values


class FileOut(serializers.Serializer):
    id = serializers.IntegerField()
    group = serializers.CharField()
    name = serializers.CharField()
    subject = serializers.CharField()
    poster = serializers.CharField()
    date = serializers.IntegerField(help_text="Unix time of the earliest segment.")
    total = serializers.IntegerField(help_text="Segments the file has (from its subject).")
    segments = serializers.IntegerField(help_text="Segments the catalog holds.")
    bytes = serializers.IntegerField()
    complete = serializers.BooleanField()


class FileDetailOut(FileOut):
    file_index = serializers.IntegerField(allow_null=True)
    file_count = serializers.IntegerField(allow_null=True)
    conflicts = serializers.IntegerField(
        help_text="Message-ids reported for a part that already had another one."
    )
    rule_version = serializers.IntegerField()


# Renders a selectors.FilePage; context holds the request and the page it asked for.
class FilePageOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="Exact up to 10,000; capped there.")
    count_capped = serializers.BooleanField(help_text="True when more files match than count.")
    next = serializers.SerializerMethodField()
    results = FileOut(many=True)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_next(self, page: Any) -> str | None:
        """The same query one page on, or None on the last page."""
        if not page.has_next:
            return None
        url = self.context["request"].build_absolute_uri()
        if self.context.get("after") is not None:  # a keyset walk goes on by keyset
            return replace_query_param(url, "after", page.results[-1]["id"])
        return replace_query_param(url, "page", self.context["page"] + 1)


# --- releases -------------------------------------------------------------------

MAX_CATEGORIES = 20


class ReleaseListIn(ListQueryIn):
    blank_means_any = ("group", "q", "category")

    q = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="Part of the release name."
    )
    category = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Newznab ids, comma-separated; a parent (2000) includes its children.",
    )
    group = serializers.CharField(required=False, allow_blank=True, max_length=255)
    min_completion = DecimalNumberField(
        required=False, min_value=0, max_value=100, help_text="Percent of segments present."
    )
    since = WholeNumberField(
        required=False, min_value=0, max_value=MAX_DATE, help_text="Posted at or after (Unix)."
    )
    after = serializers.CharField(
        required=False, max_length=40, help_text="The cursor of the page before (its `next`)."
    )
    limit = WholeNumberField(required=False, min_value=1, max_value=MAX_RELEASE_LIMIT)

    def validate_category(self, value: str) -> list[int]:
        ids = [item for item in value.split(",") if item.strip()]
        try:
            if len(ids) <= MAX_CATEGORIES:
                return [whole_number(i, high=MAX_CATEGORY) for i in ids]
        except NotANumber:
            pass
        raise serializers.ValidationError(
            f"is a comma-separated list of at most {MAX_CATEGORIES} newznab ids, "
            "each in ASCII digits 0-9 (such as 2000,5030)."
        )

    def validate_after(self, value: str) -> tuple[int, int]:
        posted, dot, last_id = value.partition(".")
        try:
            if dot:
                return (
                    whole_number(posted, high=MAX_DATE * 1_000_000),
                    whole_number(last_id, high=MAX_BIGINT),
                )
        except NotANumber:
            pass
        raise serializers.ValidationError("is not a cursor from a page's next link.")


class ReleaseOut(serializers.Serializer):
    """A release: the files of one post, grouped across groups and parts."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    poster = serializers.CharField()
    posted = serializers.IntegerField(help_text="Unix time of its earliest file.")
    size = serializers.IntegerField(help_text="Bytes of the segments present.")
    files_expected = serializers.IntegerField(
        allow_null=True, help_text="From the subjects' [03/12] counters."
    )
    files_seen = serializers.IntegerField(help_text="Catalog files (one per group posted to).")
    segments_present = serializers.IntegerField()
    segments_expected = serializers.IntegerField(help_text="Over the files seen.")
    completion = serializers.FloatField(help_text="Segments present over expected, percent.")
    has_par2 = serializers.BooleanField()
    has_nfo = serializers.BooleanField()
    category = serializers.IntegerField(help_text="Newznab category id.")
    category_name = serializers.CharField()
    groups = serializers.ListField(child=serializers.CharField())
    # What inspection found (docs/inspection.md); null and false until then.
    posted_name = serializers.CharField(
        allow_null=True, help_text="The poster's name, once inspection renamed the release."
    )
    passworded = serializers.BooleanField(help_text="A password is needed to unpack it.")
    encrypted = serializers.BooleanField(help_text="Its archive's headers are encrypted.")
    imdb_id = serializers.CharField(allow_null=True, help_text='From its nfo: "tt0111161".')
    tvdb_id = serializers.IntegerField(allow_null=True, help_text="From its nfo.")
    nzb = serializers.SerializerMethodField()

    @extend_schema_field(serializers.CharField())
    def get_nzb(self, release: dict[str, Any]) -> str:
        path = reverse("catalog-release-by-id-nzb", args=[release["id"]])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class ReleaseFileOut(FileOut):
    file_index = serializers.IntegerField(allow_null=True)


class ReleaseDetailOut(ReleaseOut):
    files = ReleaseFileOut(many=True)


# Renders a selectors.ReleasePage; context holds the request.
class ReleasePageOut(serializers.Serializer):
    next = serializers.SerializerMethodField()
    results = ReleaseOut(many=True)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_next(self, page: Any) -> str | None:
        """The same query after the last result, or None on the last page."""
        if page.next_after is None:
            return None
        url = self.context["request"].build_absolute_uri()
        return replace_query_param(url, "after", "{}.{}".format(*page.next_after))
