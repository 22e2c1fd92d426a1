"""Input and output shapes of the range protocol (docs/api.md)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from indexer.catalog.validation import FileReport, validate_files
from usenet.limits import MAX_ARTICLE, MAX_EPOCH, MAX_FILES_PER_BATCH, MAX_HEADERS_PER_BATCH


class FileDocSerializer(serializers.Serializer):
    """Documents the File shape; validation itself is `validation.validate_file`."""

    subject = serializers.CharField(max_length=1000)
    poster = serializers.CharField(max_length=500)
    date = serializers.IntegerField(help_text="Unix time of the earliest segment.")
    total = serializers.IntegerField(help_text="Segment count from the subject.")
    segments = serializers.ListField(
        child=serializers.ListField(),
        help_text="[part number, article number, message-id, bytes] per segment.",
    )


@extend_schema_field(FileDocSerializer(many=True))
class FileListField(serializers.Field):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", list)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[FileReport]:
        return validate_files(data, self.field_name or "files", MAX_FILES_PER_BATCH)

    def to_representation(self, value: Any) -> Any:
        return value


class EpochIn(serializers.Serializer):
    epoch = serializers.IntegerField(min_value=0, max_value=MAX_EPOCH)


class BatchIn(EpochIn):
    next = serializers.IntegerField(min_value=0, max_value=MAX_ARTICLE)
    headers = serializers.IntegerField(min_value=0, max_value=MAX_HEADERS_PER_BATCH)
    files = FileListField()
    fragments = FileListField()


class ReleaseIn(EpochIn):
    error = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=100_000
    )
    uncounted = serializers.BooleanField(required=False, default=False)


class RangeLeaseOut(serializers.Serializer):
    id = serializers.IntegerField()
    group = serializers.CharField()
    start = serializers.IntegerField(
        help_text="The resume point: the first article not reported yet."
    )
    end = serializers.IntegerField()
    epoch = serializers.IntegerField()


class LeaseOfferOut(serializers.Serializer):
    lease = RangeLeaseOut(allow_null=True)
    retry_after = serializers.IntegerField(allow_null=True)
    paused = serializers.CharField(allow_null=True)


class BatchOut(serializers.Serializer):
    next = serializers.IntegerField()
    stored = serializers.IntegerField()


class OverviewsQuery(serializers.Serializer):
    """Query of GET /ranges/{id}/overviews: ?epoch=&from=&to= ("from" is a Python keyword)."""

    epoch = serializers.IntegerField(min_value=0, max_value=MAX_EPOCH)
    first = serializers.IntegerField(
        min_value=0, max_value=MAX_ARTICLE, help_text="First article wanted (query key: from)."
    )
    to = serializers.IntegerField(
        min_value=0, max_value=MAX_ARTICLE, help_text="Last article wanted, inclusive."
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        first = fields.pop("first")
        first.help_text = "First article wanted."
        return {"epoch": fields["epoch"], "from": first, "to": fields["to"]}
